"""Field validators shared by the models, so the admin, the REST API and ``full_clean()`` agree.

Each raises ``django.core.exceptions.ValidationError`` with a message that says what is wrong.
Rules and their sources:

- names: 1-128 of ``[A-Za-z0-9_.-]`` (2025-11-25 server/tools.mdx "Tool names").
- schemas: a valid JSON Schema 2020-12 object schema with ``type: "object"`` (server/tools.mdx
  ``inputSchema`` / ``outputSchema``; 2025-11-25 basic/index.mdx "JSON Schema Usage"), nested at
  most ``MAX_SCHEMA_DEPTH`` deep and at most ``MAX_SCHEMA_BYTES`` as JSON.
- ``x-mcp-header``: 2026-07-28 server/tools.mdx and transports "Custom Headers" (checklist 35).
- URIs: RFC 3986 absolute URIs; URI templates: RFC 6570 (see ``mcp_protocol.uri_template``).
- media types (``mimeType``): RFC 6838 §4.2 ``type/subtype``, with RFC 9110 parameters.
- icons, annotations and ``_meta``: the shapes of schema.ts; content blocks: ``content_blocks``.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from typing import Any

from django.core.exceptions import ValidationError
from django.core.validators import RegexValidator
from jsonschema import Draft202012Validator, SchemaError

from mcp_protocol.uri import uri_problem
from mcp_protocol.uri_template import TemplateSyntaxError, parse_template

from .x_mcp_header import validate_x_mcp_headers

NAME_RE = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")
JSON_SCHEMA_2020_12 = "https://json-schema.org/draft/2020-12/schema"
# RFC 3986 §3.1 scheme, and the characters a URI may contain (unreserved, reserved, '%').
_SCHEME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_URI_CHARS_RE = re.compile(r"^[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]*$")
_BAD_PERCENT_RE = re.compile(r"%(?![0-9A-Fa-f]{2})")

# RFC 6838 §4.2 restricted-name (type and subtype), and RFC 9110 §8.3.1 parameters.
_RESTRICTED_NAME = r"[A-Za-z0-9][A-Za-z0-9!#$&\-^_.+]{0,126}"
_TOKEN = r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+"
_QUOTED_STRING = r'"(?:[^"\\\x00-\x08\x0a-\x1f\x7f]|\\[\x09\x20-\x7e])*"'
MEDIA_TYPE_RE = re.compile(
    rf"{_RESTRICTED_NAME}/{_RESTRICTED_NAME}(?:[ \t]*;[ \t]*{_TOKEN}=(?:{_TOKEN}|{_QUOTED_STRING}))*"
)

ROLES = ("user", "assistant")
# Objects and arrays in a schema, nested. jsonschema checks a schema (and validates arguments
# against it) recursively, about ten Python frames a level: past a hundred levels a schema is a
# RecursionError, not an answer. Real tool schemas nest a handful of levels.
MAX_SCHEMA_DEPTH = 64
# A schema is sent in every tools/list and kept in every version: a stored size bound stops a
# small document that expands (YAML aliases, a $ref tree inlined) from storing megabytes (issue
# 37 item 6). Real tool schemas, imported OpenAPI ones included, are a few KB.
MAX_SCHEMA_BYTES = 256 * 1024

env_var_name = RegexValidator(
    r"^[A-Za-z_][A-Za-z0-9_]*$", "An environment variable name: letters, digits, '_'."
)
header_name = RegexValidator(rf"^{_TOKEN}$", "An HTTP header name (RFC 9110 token).")


def validate_name(value: str) -> None:
    if not isinstance(value, str) or not NAME_RE.fullmatch(value):
        raise ValidationError(
            "Name must be 1-128 characters from A-Z, a-z, 0-9, '_', '.', '-' (got %(value)r).",
            code="invalid_name",
            params={"value": value},
        )


def validate_json_object(value: Any, what: str = "value") -> None:
    if not isinstance(value, dict):
        raise ValidationError(
            f"The {what} must be a JSON object, not {type(value).__name__}.", code="not_object"
        )


def nests_deeper_than(value: Any, limit: int) -> bool:
    """Whether JSON objects and arrays nest more than ``limit`` deep in ``value`` (``{}`` is one
    deep, a string none). Without recursion, so any depth is measured."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False


def validate_object_schema(value: Any) -> None:
    """A JSON Schema 2020-12 document describing an object."""
    if not isinstance(value, dict):
        raise ValidationError("The schema must be a JSON object.", code="not_object")
    if nests_deeper_than(value, MAX_SCHEMA_DEPTH):
        raise ValidationError(
            f"The schema nests objects and arrays more than {MAX_SCHEMA_DEPTH} deep.", code="too_deep"
        )
    size = len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())
    if size > MAX_SCHEMA_BYTES:
        raise ValidationError(
            f"The schema is {size} bytes as JSON; at most {MAX_SCHEMA_BYTES} are kept.", code="too_large"
        )
    dialect = value.get("$schema")
    if dialect is not None and dialect != JSON_SCHEMA_2020_12:
        raise ValidationError(
            f"Only JSON Schema 2020-12 is supported: $schema must be {JSON_SCHEMA_2020_12!r} or absent.",
            code="dialect",
        )
    if value.get("type") != "object":
        raise ValidationError('The schema must have "type": "object".', code="not_object_type")
    try:
        Draft202012Validator.check_schema(value)
    except SchemaError as exc:
        where = json_pointer(exc.absolute_path)
        raise ValidationError(
            f"Not a valid JSON Schema 2020-12 at {where or '(root)'}: {exc.message}",
            code="schema",
            params={"pointer": where},
        ) from None


def json_pointer(path: Any) -> str:
    """RFC 6901 JSON pointer of a path of keys and indexes (``""`` is the whole document)."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


def validate_input_schema(value: Any) -> None:
    validate_object_schema(value)
    validate_x_mcp_headers(value)


def validate_uri(value: str) -> None:
    """An absolute URI per RFC 3986 (scheme ':' hier-part), with only URI characters."""
    if not isinstance(value, str) or not _SCHEME_RE.match(value):
        raise ValidationError(
            "%(value)r is not an absolute URI: it needs a scheme such as 'file:', 'https:' or 'test:' "
            "(RFC 3986 §3).",
            code="uri_scheme",
            params={"value": value},
        )
    if not _URI_CHARS_RE.fullmatch(value):
        bad = sorted({c for c in value if not _URI_CHARS_RE.fullmatch(c)})
        raise ValidationError(
            "%(value)r contains characters not allowed in a URI (%(bad)s); "
            "percent-encode them (RFC 3986 §2).",
            code="uri_chars",
            params={"value": value, "bad": " ".join(repr(c) for c in bad)},
        )
    if _BAD_PERCENT_RE.search(value):
        raise ValidationError(
            "%(value)r has a '%%' not followed by two hex digits (RFC 3986 §2.1).",
            code="uri_percent",
            params={"value": value},
        )
    # The rest of the syntax (each character in its part) as the server checks it on read, so a
    # stored URI is one that resources/read accepts.
    problem = uri_problem(value)
    if problem is not None:
        raise ValidationError("%(value)r: %(problem)s.", code="uri_syntax",
                              params={"value": value, "problem": problem})


def validate_media_type(value: str) -> None:
    """A media type such as ``text/plain`` or ``text/plain; charset=utf-8``: ``type/subtype`` of
    RFC 6838 §4.2 restricted names, then optional RFC 9110 §8.3.1 parameters."""
    if not value:
        return  # optional everywhere it is stored (mimeType? in schema.ts)
    if not isinstance(value, str) or not MEDIA_TYPE_RE.fullmatch(value):
        raise ValidationError(
            "%(value)r is not a media type: write type/subtype such as 'text/plain' or "
            "'application/json', optionally with '; name=value' parameters (RFC 6838 §4.2).",
            code="media_type",
            params={"value": value},
        )


def validate_uri_template(value: str) -> None:
    try:
        template = parse_template(value)
    except TemplateSyntaxError as exc:
        raise ValidationError(f"Not a valid RFC 6570 URI template: {exc}", code="uri_template") from None
    if not template.variables:
        raise ValidationError(
            "A URI template needs at least one {variable}; use a resource for a fixed URI.",
            code="uri_template_static",
        )
    validate_uri(template.example_uri())


def validate_http_url(value: str) -> None:
    """An absolute http(s) URL, or an RFC 6570 template of one whose scheme and host are literal
    text: ``https://api.example.com/pets/{id}{?limit}``. Arguments fill the path and query, never
    the host (a ``{+x}`` right after the host could otherwise turn ``host{+x}`` into ``host@evil``)."""
    if not isinstance(value, str) or not re.match(r"^https?://[^/?#\s{}]+", value):
        raise ValidationError("The URL must be an absolute http:// or https:// URL.", code="http_url")
    if "{" not in value:
        validate_uri(value)
        return
    try:
        template = parse_template(value)
    except TemplateSyntaxError as exc:
        raise ValidationError(f"Not a valid RFC 6570 URL template: {exc}", code="http_url") from None
    if not re.match(r"^https?://[^/?#\s{}]+[/?#]", value):
        raise ValidationError(
            "In a URL template the host is literal text: put '/' or '?' before the first {variable}.",
            code="http_url_host",
        )
    validate_uri(template.example_uri())


def validate_icons(value: Any) -> None:
    """``Icon[]`` (2025-11-25 schema.ts): ``src`` (http(s) or data: URI), ``mimeType?``,
    ``sizes?: string[]``, ``theme?: "light" | "dark"``."""
    if value in (None, []):
        return
    if not isinstance(value, list):
        raise ValidationError("Icons must be a JSON list of icon objects.", code="icons")
    for index, icon in enumerate(value):
        prefix = f"Icon {index + 1}"
        if not isinstance(icon, dict):
            raise ValidationError(f"{prefix} must be an object with a 'src'.", code="icons")
        unknown = set(icon) - {"src", "mimeType", "sizes", "theme"}
        if unknown:
            raise ValidationError(f"{prefix} has unknown keys: {', '.join(sorted(unknown))}.", code="icons")
        src = icon.get("src")
        if not isinstance(src, str) or not re.match(r"^(https?://|data:)", src):
            raise ValidationError(f"{prefix}: 'src' must be an https://, http:// or data: URI.", code="icons")
        if "mimeType" in icon and (
            not isinstance(icon["mimeType"], str) or not MEDIA_TYPE_RE.fullmatch(icon["mimeType"])
        ):
            raise ValidationError(
                f"{prefix}: 'mimeType' must be a media type such as \"image/png\".", code="icons"
            )
        sizes = icon.get("sizes")
        if sizes is not None and (
            not isinstance(sizes, list)
            or not all(isinstance(s, str) and re.fullmatch(r"(\d+x\d+|any)", s) for s in sizes)
        ):
            raise ValidationError(f'{prefix}: \'sizes\' must be a list like ["48x48", "any"].', code="icons")
        if "theme" in icon and icon["theme"] not in ("light", "dark"):
            raise ValidationError(f'{prefix}: \'theme\' must be "light" or "dark".', code="icons")


def validate_tool_annotations(value: Any) -> None:
    """``ToolAnnotations``: ``title?`` and boolean hints."""
    if value in (None, {}):
        return
    validate_json_object(value, "annotations")
    hints = {"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"}
    unknown = set(value) - hints - {"title"}
    if unknown:
        raise ValidationError(f"Unknown tool annotations: {', '.join(sorted(unknown))}.", code="annotations")
    for key in hints & set(value):
        if not isinstance(value[key], bool):
            raise ValidationError(f"Annotation {key!r} must be true or false.", code="annotations")
    if "title" in value and not isinstance(value["title"], str):
        raise ValidationError("Annotation 'title' must be a string.", code="annotations")


def validate_annotations(value: Any) -> None:
    """``Annotations`` of resources and content: ``audience?``, ``priority?`` (0-1), ``lastModified?``."""
    if value in (None, {}):
        return
    validate_json_object(value, "annotations")
    unknown = set(value) - {"audience", "priority", "lastModified"}
    if unknown:
        raise ValidationError(f"Unknown annotations: {', '.join(sorted(unknown))}.", code="annotations")
    audience = value.get("audience")
    if audience is not None and (
        not isinstance(audience, list) or not all(isinstance(a, str) and a in ROLES for a in audience)
    ):
        raise ValidationError('"audience" must be a list of "user" / "assistant".', code="annotations")
    priority = value.get("priority")
    if priority is not None and (
        isinstance(priority, bool) or not isinstance(priority, int | float) or not 0 <= priority <= 1
    ):
        raise ValidationError('"priority" must be a number from 0 to 1.', code="annotations")
    if "lastModified" in value and not isinstance(value["lastModified"], str):
        raise ValidationError('"lastModified" must be an ISO 8601 string.', code="annotations")


TAG = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")


def validate_tags(value: Any) -> None:
    """Tags grant a definition to API keys that name them (access app): short words, no spaces."""
    if value in (None, []):
        return
    if not isinstance(value, list) or not all(isinstance(t, str) and TAG.match(t) for t in value):
        raise ValidationError('Tags must be a list of words (letters, digits, "_.:-"), e.g. ["public"].',
                              code="tags")


def validate_meta(value: Any) -> None:
    if value in (None, {}):
        return
    validate_json_object(value, "_meta")


def validate_base64(value: str) -> None:
    if not value:
        return
    if not isinstance(value, str):
        raise ValidationError("Base64 data must be a string.", code="base64")
    try:
        base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise ValidationError("Not valid base64 data.", code="base64") from None


def validate_string_list(value: Any) -> None:
    if value in (None, []):
        return
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValidationError('Must be a JSON list of strings, e.g. ["python", "rust"].', code="string_list")

