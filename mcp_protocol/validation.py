"""JSON Schema validation of tool arguments and structured results, with compiled validators cached.

Draft 2020-12 is the default dialect when a schema has no ``$schema`` ([11+] basic/index.mdx
"JSON Schema Usage"); a schema naming another draft gets that draft's validator. Remote ``$ref``s
are never fetched ([26] MUST NOT auto-dereference network refs): left to its defaults,
``jsonschema`` 4.x still downloads them (with a DeprecationWarning), so every validator gets an
explicit registry holding only the official meta-schemas; an unresolvable ``$ref`` makes the schema
invalid (``InvalidSchema``), never a network request.

Validators are cached per schema *object* (definitions are immutable, so a snapshot's schema
objects live as long as the snapshot): the hot path never recompiles. The cache keeps a reference
to each schema so an ``id`` is never reused while its entry exists, and is cleared when it grows
past ``_MAX_CACHED`` (a refreshed snapshot brings new objects).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from jsonschema import Draft202012Validator, validators
from jsonschema.exceptions import SchemaError
from jsonschema.protocols import Validator
from jsonschema_specifications import REGISTRY as META_SCHEMAS
from referencing.exceptions import Unresolvable

_MAX_CACHED = 4096
_cache: dict[int, tuple[Mapping[str, Any], Validator]] = {}
_lock = threading.Lock()


class InvalidSchema(Exception):
    """The schema itself is not valid JSON Schema (a definition bug, not a client error)."""


def _to_plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _to_plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_to_plain(v) for v in value]
    return value


def compile_schema(schema: Mapping[str, Any]) -> Validator:
    """The cached validator for ``schema`` (raises ``InvalidSchema``)."""
    entry = _cache.get(id(schema))
    if entry is not None and entry[0] is schema:
        return entry[1]
    plain = _to_plain(schema)
    cls = validators.validator_for(plain, default=Draft202012Validator)
    try:
        cls.check_schema(plain)
    except SchemaError as exc:
        raise InvalidSchema(str(exc.message)) from exc
    validator: Validator = cls(plain, registry=META_SCHEMAS)
    with _lock:
        if len(_cache) >= _MAX_CACHED:
            _cache.clear()
        _cache[id(schema)] = (schema, validator)
    return validator


def errors(schema: Mapping[str, Any], instance: Any, limit: int = 5) -> list[str]:
    """Human-readable validation failures (empty when ``instance`` conforms)."""
    validator = compile_schema(schema)
    found: list[str] = []
    try:
        for error in validator.iter_errors(instance):
            where = "/".join(str(p) for p in error.absolute_path)
            found.append(f"{where}: {error.message}" if where else error.message)
            if len(found) >= limit:
                break
    except Unresolvable as exc:
        raise InvalidSchema(f"Unresolvable $ref: {exc}") from exc
    return found


def cache_size() -> int:
    return len(_cache)
