"""The ``x-mcp-header`` rules of 2026-07-28 for a tool's ``inputSchema`` (checklist item 35).

2026-07-28 server/tools.mdx and basic/transports "Custom Headers": a property MAY carry
``x-mcp-header: <Name>`` so clients mirror its value into ``Mcp-Param-<Name>``. The value must be
a non-empty RFC 9110 token, unique ignoring case, on an integer/string/boolean property (never
``number``; ``"null"`` may be added, as in ``["string", "null"]``) that is statically reachable from
the root through ``properties`` keys alone; integers (bounds, ``const``, ``enum``, ``default``) must
stay within +-(2^53-1). A schema breaking a rule is refused at save time, because clients MUST
drop such a tool from the listing.
"""

from __future__ import annotations

import re
from typing import Any

from django.core.exceptions import ValidationError

X_MCP_HEADER = "x-mcp-header"
_TOKEN_RE = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")  # RFC 9110 §5.6.2 token
_HEADER_TYPES = {"string", "integer", "boolean"}
_MAX_SAFE = 2**53 - 1
# JSON Schema 2020-12 applicators whose values are schemas; only ``properties`` keeps a property
# "statically reachable" for x-mcp-header.
_SUB_ONE = {
    "items",
    "contains",
    "unevaluatedItems",
    "additionalProperties",
    "propertyNames",
    "unevaluatedProperties",
    "not",
    "if",
    "then",
    "else",
    "contentSchema",
}
_SUB_LIST = {"allOf", "anyOf", "oneOf", "prefixItems"}
_SUB_MAP = {"patternProperties", "dependentSchemas", "$defs", "definitions"}


def _schema_positions(root: Any) -> list[tuple[tuple[str, ...] | None, dict[str, Any]]]:
    """Every schema position with its chain of ``properties`` keys (None once off that chain)."""
    found: list[tuple[tuple[str, ...] | None, dict[str, Any]]] = []
    stack: list[tuple[tuple[str, ...] | None, Any]] = [((), root)]
    while stack:
        path, node = stack.pop()
        if not isinstance(node, dict):
            continue
        found.append((path, node))
        for key, sub in node.items():
            if key == "properties" and isinstance(sub, dict):
                stack.extend(((*path, n) if path is not None else None, s) for n, s in sub.items())
            elif key in _SUB_ONE:
                stack.append((None, sub))
            elif key in _SUB_LIST and isinstance(sub, list):
                stack.extend((None, s) for s in sub)
            elif key in _SUB_MAP and isinstance(sub, dict):
                stack.extend((None, s) for s in sub.values())
    return found


def _header_type(declared: Any) -> str | None:
    """The one primitive type a header property holds, or None if it may hold anything else.

    ``"null"`` may join it (``["string", "null"]``): a null value means "send no header"
    (2026-07-28 streamable-http.mdx, "Parameter value is null": the client MUST omit the header).
    A union of two primitives is refused, as the header could not say which one was meant.
    """
    if isinstance(declared, str):
        return declared if declared in _HEADER_TYPES else None
    if isinstance(declared, list) and all(isinstance(t, str) for t in declared):
        kinds: set[str] = {t for t in declared if t != "null"}
        if len(kinds) == 1 and kinds <= _HEADER_TYPES:
            return kinds.pop()
    return None


def _out_of_range(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and abs(value) > _MAX_SAFE


def _integer_range_errors(where: str, node: dict[str, Any]) -> list[str]:
    """Integers carried in a header must stay within ±(2^53-1) (checklist 35), so every value the
    schema allows or names (bounds, ``const``, ``enum`` members, ``default``) must be in range."""
    errors = [
        f"Property {where!r}: {keyword} is outside ±(2^53-1), not allowed with x-mcp-header."
        for keyword in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "const", "default")
        if _out_of_range(node.get(keyword))
    ]
    enum = node.get("enum")
    if isinstance(enum, list):
        errors.extend(
            f"Property {where!r}: enum value {value!r} is outside ±(2^53-1), not allowed with x-mcp-header."
            for value in enum
            if _out_of_range(value)
        )
    return errors


def validate_x_mcp_headers(schema: Any) -> None:
    """2026-07-28 ``x-mcp-header`` rules: a unique (ignoring case) RFC 9110 token, only on an
    integer/string/boolean property reachable through ``properties`` alone."""
    errors: list[str] = []
    seen: dict[str, str] = {}
    for path, node in sorted(_schema_positions(schema), key=lambda item: str(item[0])):
        if X_MCP_HEADER not in node:
            continue
        if not path:
            errors.append(
                "x-mcp-header is only allowed on a property reachable through 'properties' alone "
                "(not at the root, nor under items, $defs, oneOf/anyOf/allOf/not, if/then/else)."
            )
            continue
        where = ".".join(path)
        header = node[X_MCP_HEADER]
        if not isinstance(header, str) or not _TOKEN_RE.fullmatch(header):
            errors.append(
                f"Property {where!r}: x-mcp-header must be a non-empty RFC 9110 token, got {header!r}."
            )
            continue
        header_type = _header_type(node.get("type"))
        if header_type is None:
            errors.append(
                f"Property {where!r}: x-mcp-header is only allowed on integer, string or boolean "
                f"properties: 'type' must be one of those, optionally with \"null\" as in "
                f'["string", "null"] (type is {node.get("type")!r}).'
            )
        elif header_type == "integer":
            errors.extend(_integer_range_errors(where, node))
        if header.lower() in seen:
            errors.append(
                f"Property {where!r}: x-mcp-header {header!r} duplicates property {seen[header.lower()]!r}."
            )
        seen.setdefault(header.lower(), where)
    if errors:
        raise ValidationError(errors, code="x_mcp_header")
