"""JSON Schema validation of tool arguments and structured results, with compiled validators cached.

Draft 2020-12 is the default dialect when a schema has no ``$schema`` ([11+] basic/index.mdx
"JSON Schema Usage"); a schema naming another draft gets that draft's validator. Remote ``$ref``s
are never fetched ([26] MUST NOT auto-dereference network refs): left to its defaults,
``jsonschema`` 4.x still downloads them (with a DeprecationWarning), so every validator gets an
explicit registry holding only the official meta-schemas; an unresolvable ``$ref`` makes the schema
invalid (``InvalidSchema``), never a network request.

Validators are cached per schema *object* (``by_schema.PerSchema``): the hot path never
recompiles.

Most tool schemas are flat objects of typed properties. For those, compiling also builds a plain
predicate (``_quick``) over the keywords whose meaning needs no ``jsonschema`` machinery (``type``,
``properties``, ``required``, ``additionalProperties: false``, annotations). It only ever answers
"conforms"; anything it is not sure of (a keyword outside that set, a failing value, a float where
an integer is asked) goes to the full validator, which alone writes error messages. A conforming
call thus costs a few dict lookups instead of ``iter_errors`` (about a fifth of a served
``tools/call`` before, bench/results/2026-11-24-hot-path-issue16.md).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from jsonschema import Draft202012Validator, validators
from jsonschema.exceptions import SchemaError
from jsonschema.protocols import Validator
from jsonschema_specifications import REGISTRY as META_SCHEMAS
from referencing.exceptions import Unresolvable

from .by_schema import PerSchema

Quick = Callable[[Any], bool]


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
    return _compiled(schema)[0]


def _compile(schema: Mapping[str, Any]) -> tuple[Validator, Quick | None]:
    plain = _to_plain(schema)
    cls = validators.validator_for(plain, default=Draft202012Validator)
    try:
        cls.check_schema(plain)
    except SchemaError as exc:
        raise InvalidSchema(str(exc.message)) from exc
    validator: Validator = cls(plain, registry=META_SCHEMAS)
    # Only the default dialect: other drafts differ on details the predicate would have to know.
    quick = _quick(plain) if plain.get("$schema", DIALECT) == DIALECT else None
    return validator, quick


_compiled = PerSchema(_compile)


def errors(schema: Mapping[str, Any], instance: Any, limit: int = 5) -> list[str]:
    """Human-readable validation failures (empty when ``instance`` conforms)."""
    validator, quick = _compiled(schema)
    if quick is not None and quick(instance):
        return []
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
    return len(_compiled)


# -- the quick predicate ---------------------------------------------------------------------------
DIALECT = "https://json-schema.org/draft/2020-12/schema"
# Keywords that assert nothing (annotations; ``format`` too: no format checker is configured) and
# the keywords the predicate implements. Anything else (a vendor ``x-`` key aside) → no predicate.
_ANNOTATIONS = frozenset({
    "$schema", "$comment", "title", "description", "default", "examples", "deprecated", "readOnly",
    "writeOnly", "format",
})
_HANDLED = frozenset({"type", "properties", "required", "additionalProperties"})
_TYPES: dict[str, Quick] = {
    "string": lambda v: isinstance(v, str),
    # 2020-12 also counts 1.0 as an integer: a float is left to the full validator.
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "null": lambda v: v is None,
}


def _quick(schema: Any) -> Quick | None:
    """A predicate that is True only for instances ``schema`` accepts; None when the schema uses
    anything beyond the handled keywords (the full validator then always runs)."""
    if schema is True or schema == {}:
        return lambda v: True
    if not isinstance(schema, dict):
        return None
    for keyword in schema:
        if keyword not in _HANDLED and keyword not in _ANNOTATIONS and not keyword.startswith("x-"):
            return None
    checks: list[Quick] = []
    kind = schema.get("type")
    if kind is not None:
        names = [kind] if isinstance(kind, str) else kind
        if not isinstance(names, list) or not names or any(n not in _TYPES for n in names):
            return None
        tests = [_TYPES[n] for n in names]
        checks.append(tests[0] if len(tests) == 1 else (lambda v: any(t(v) for t in tests)))
    properties = schema.get("properties", {})
    required = schema.get("required", [])
    extra = schema.get("additionalProperties", True)
    if (not isinstance(properties, dict) or not isinstance(required, list)
            or not all(isinstance(r, str) for r in required) or extra not in (True, False)):
        return None
    inner: dict[str, Quick] = {}
    for name, sub in properties.items():
        check = _quick(sub)
        if check is None:
            return None
        inner[name] = check
    if inner or required or extra is False:
        known = frozenset(properties)

        def members(v: Any) -> bool:
            if not isinstance(v, dict):
                return True  # properties/required only apply to objects
            for key in required:
                if key not in v:
                    return False
            for key, value in v.items():
                check = inner.get(key)
                if check is not None:
                    if not check(value):
                        return False
                elif extra is False and key not in known:
                    return False
            return True

        checks.append(members)
    if not checks:
        return lambda v: True
    if len(checks) == 1:
        return checks[0]
    first, second = checks
    return lambda v: first(v) and second(v)
