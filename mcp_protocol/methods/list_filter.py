"""SEP-2564 "Server-Side Filtering for List Methods" (draft, modelcontextprotocol/modelcontextprotocol
PR #2564, ``seps/2564-server-side-filtering-for-list-methods.md`` at commit
458a124b02e19ade3b852bbea18fbee88ddc871d), for ``tools/list`` only, behind a setting
(``Server.list_filter``; ``MCP["TOOLS_LIST_FILTER"]``): a draft is opt-in.

What the SEP says and this follows:

- "Capability Negotiation": the server advertises ``capabilities.tools.filtering.supported``
  (``["namePatterns"]``); without it clients MUST NOT send a filter, and this server then ignores
  one (the parameter is not read at all).
- "Filter Semantics": a missing ``filter``, ``{}``, or an empty ``namePatterns`` returns everything;
  several patterns are OR; unknown fields are ignored silently (vendor fields included).
- "Pattern Matching": ``*`` zero or more characters, ``?`` exactly one, everything else literal and
  case-sensitive; that minimum and nothing more (``[`` is a literal here).
- "Filtering Constraints" / "Error Handling": at most ``MAX_PATTERNS`` patterns of at most
  ``MAX_PATTERN_LENGTH`` characters (the SEP's recommended limits), else -32602 "Too many
  patterns: ..." / "Invalid pattern in namePatterns: ..."; a ``filter`` that is not an object, or
  patterns that are not strings, -32602 too (a malformed request).
- "Interaction with Pagination": a cursor names its filter (the paginator's list kind carries the
  filter's digest), and a cursor used with another filter is -32602 "Filter parameters must not
  change between paginated requests".
- "Filtering is NOT access control": it narrows what the caller's view lists; a filtered-out tool
  is still callable, and nothing outside the view is ever listed.
"""

from __future__ import annotations

import hashlib
import json
import re
from functools import lru_cache
from typing import Any

from ..errors import InvalidParams

FIELD = "namePatterns"


def capability() -> dict[str, Any]:
    """``capabilities.tools.filtering`` (SEP-2564 ``FilteringCapability``)."""
    return {"supported": [FIELD]}


MAX_PATTERNS, MAX_PATTERN_LENGTH = 100, 256
CHANGED = "Filter parameters must not change between paginated requests"


def patterns(params: dict[str, Any]) -> tuple[str, ...]:
    """The request's ``filter.namePatterns``, checked (empty: no filtering)."""
    given = params.get("filter")
    if given is None:
        return ()
    if not isinstance(given, dict):
        raise InvalidParams("params.filter must be an object")
    names = given.get(FIELD)
    if names is None:
        return ()
    if not isinstance(names, list) or not all(isinstance(p, str) for p in names):
        raise InvalidParams(f"params.filter.{FIELD} must be an array of strings")
    for pattern in names:
        if not pattern or len(pattern) > MAX_PATTERN_LENGTH:
            raise InvalidParams(f"Invalid pattern in {FIELD}: {pattern[:MAX_PATTERN_LENGTH]!r} — "
                                f"1 to {MAX_PATTERN_LENGTH} characters")
    if len(names) > MAX_PATTERNS:
        raise InvalidParams(f"Too many patterns: {len(names)} exceeds maximum of {MAX_PATTERNS}")
    return tuple(dict.fromkeys(names))


def _segment(text: str) -> str:
    return "".join("." if c == "?" else re.escape(c) for c in text)


def _glob(pattern: str) -> str:
    """``pattern`` as a regex that cannot backtrack badly: between stars each literal segment is
    matched at its leftmost place inside an atomic group (leftmost is always the best place for a
    glob), so a hostile pattern (``*a*a*a…``) costs linear scans, never exponential ones."""
    if "*" not in pattern:
        return _segment(pattern)
    head, *middle, tail = pattern.split("*")
    inner = "".join(f"(?>.*?{_segment(part)})" for part in middle if part)
    return f"{_segment(head)}{inner}.*{_segment(tail)}"


@lru_cache(maxsize=256)
def _compiled(names: tuple[str, ...]) -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(_glob(p) + r"\Z", re.DOTALL) for p in names)


def matches(names: tuple[str, ...], name: str) -> bool:
    return any(p.match(name) is not None for p in _compiled(names))


def kind(base: str, names: tuple[str, ...]) -> str:
    """The paginator's list kind for this filter: a cursor of another filter does not fit it."""
    if not names:
        return base
    digest = hashlib.sha256(json.dumps(names).encode()).hexdigest()[:16]
    return f"{base}?{digest}"
