"""Validation of a stored ``ContentBlock`` (a prompt message's content), field by field.

Shapes are 2025-11-25 schema.ts ``ContentBlock = TextContent | ImageContent | AudioContent |
ResourceLink | EmbeddedResource``; every block may carry ``annotations?`` and ``_meta?``:

- ``text``: ``text: string``.
- ``image`` / ``audio``: ``data: string`` (base64), ``mimeType: string``.
- ``resource_link``: a ``Resource`` plus ``type``: ``uri``, ``name`` (strings), ``title?``,
  ``description?``, ``mimeType?`` (strings), ``size?`` (integer), ``icons?``.
- ``resource``: ``resource`` is ``TextResourceContents`` (``uri``, ``mimeType?``, ``text``) or
  ``BlobResourceContents`` (``uri``, ``mimeType?``, ``blob`` base64), exactly one of the two.

A stored block is a template: its strings may contain ``{{ argument }}`` (``templating.py``), so a
string holding a placeholder is only checked for being a string; its format (URI, base64, media
type) is known once rendered. Placeholders live only in strings, so every other type is checked
as stored. Every problem is one ``ValidationError`` naming the field and what is wrong; nothing
here may raise anything else, whatever JSON the admin or the API hands in.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.core.exceptions import ValidationError

from .templating import PLACEHOLDER_RE
from .validators import (
    validate_annotations,
    validate_base64,
    validate_icons,
    validate_media_type,
    validate_meta,
    validate_uri,
)

CONTENT_TYPES = ("text", "image", "audio", "resource", "resource_link")
_COMMON = {"type", "annotations", "_meta"}
# Per type: required string fields, optional string fields.
_STRINGS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "text": (("text",), ()),
    "image": (("data", "mimeType"), ()),
    "audio": (("data", "mimeType"), ()),
    "resource_link": (("uri", "name"), ("title", "description", "mimeType")),
    "resource": ((), ()),
}
_OTHER_KEYS = {"resource_link": {"size", "icons"}, "resource": {"resource"}}
# Formats checked on a string once it holds no placeholder.
_FORMATS: dict[str, Callable[[str], None]] = {
    "uri": validate_uri,
    "mimeType": validate_media_type,
    "data": validate_base64,
    "blob": validate_base64,
}


def _fail(message: str) -> ValidationError:
    return ValidationError(message, code="content")


def _is_placeholder_string(value: str) -> bool:
    return PLACEHOLDER_RE.search(value) is not None


def _check_string(owner: str, key: str, value: Any, required: bool = False) -> None:
    if not isinstance(value, str):
        raise _fail(f"{owner}: '{key}' must be a string, not {_json_type(value)}.")
    # An empty text is still a text; an empty URI, name, media type or payload is a mistake.
    if not value and key != "text" and (required or key in _FORMATS):
        raise _fail(f"{owner}: '{key}' must not be empty.")
    check = _FORMATS.get(key)
    if check is None or _is_placeholder_string(value):
        return
    try:
        check(value)
    except ValidationError as exc:
        raise _fail(f"{owner}: '{key}': {' '.join(exc.messages)}") from None


def _check_nested(owner: str, key: str, value: Any, check: Callable[[Any], None]) -> None:
    try:
        check(value)
    except ValidationError as exc:
        raise _fail(f"{owner}: '{key}': {' '.join(exc.messages)}") from None


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def validate_content_block(value: Any) -> None:
    """A ``ContentBlock`` as a prompt message stores it (strings may contain ``{{ argument }}``)."""
    if not isinstance(value, dict):
        raise _fail(f"The content must be a JSON object, not {_json_type(value)}.")
    kind = value.get("type")
    if not isinstance(kind, str) or kind not in CONTENT_TYPES:
        raise _fail(f"Content 'type' must be one of {', '.join(CONTENT_TYPES)} (got {kind!r}).")
    owner = f"{'An' if kind[0] in 'aeiou' else 'A'} {kind} content block"
    required, optional = _STRINGS[kind]
    needed = required + (("resource",) if kind == "resource" else ())
    missing = [key for key in needed if key not in value]
    if missing:
        raise _fail(f"{owner} needs {', '.join(missing)}.")
    unknown = set(value) - _COMMON - set(required) - set(optional) - _OTHER_KEYS.get(kind, set())
    if unknown:
        raise _fail(f"{owner} has unknown keys: {', '.join(sorted(unknown))}.")
    for key in required:
        _check_string(owner, key, value[key], required=True)
    for key in optional:
        if key in value:
            _check_string(owner, key, value[key])
    if "annotations" in value:
        _check_nested(owner, "annotations", value["annotations"], _annotations)
    if "_meta" in value:
        _check_nested(owner, "_meta", value["_meta"], _meta)
    if kind == "resource_link":
        size = value.get("size")
        if "size" in value and (isinstance(size, bool) or not isinstance(size, int) or size < 0):
            raise _fail(f"{owner}: 'size' must be a whole number of bytes (got {size!r}).")
        if "icons" in value:
            _check_nested(owner, "icons", value["icons"], _icons)
    if kind == "resource":
        _check_embedded(value["resource"])


def _check_embedded(resource: Any) -> None:
    owner = "An embedded resource"
    if not isinstance(resource, dict):
        raise _fail(f"{owner} ('resource') must be an object, not {_json_type(resource)}.")
    bodies = [key for key in ("text", "blob") if key in resource]
    if "uri" not in resource or len(bodies) != 1:
        raise _fail(f"{owner} needs 'uri' and exactly one of 'text' or 'blob'.")
    unknown = set(resource) - {"uri", "mimeType", "text", "blob", "_meta"}
    if unknown:
        raise _fail(f"{owner} has unknown keys: {', '.join(sorted(unknown))}.")
    _check_string(owner, "uri", resource["uri"], required=True)
    _check_string(owner, bodies[0], resource[bodies[0]])
    if "mimeType" in resource:
        _check_string(owner, "mimeType", resource["mimeType"])
    if "_meta" in resource:
        _check_nested(owner, "_meta", resource["_meta"], _meta)


def _annotations(value: Any) -> None:
    # validate_annotations lets None and {} through (blank model fields); inside a block a key
    # that is present must hold an object.
    if not isinstance(value, dict):
        raise ValidationError(f"must be an object, not {_json_type(value)}.")
    validate_annotations(value)


def _meta(value: Any) -> None:
    if not isinstance(value, dict):
        raise ValidationError(f"must be an object, not {_json_type(value)}.")
    validate_meta(value)


def _icons(value: Any) -> None:
    if not isinstance(value, list):
        raise ValidationError(f"must be a list of icon objects, not {_json_type(value)}.")
    validate_icons(value)
