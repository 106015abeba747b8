"""The quick predicate of ``validation.py`` never accepts what the full JSON Schema validator
rejects, and is only built for schemas it fully understands."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from mcp_protocol import validation

SCHEMAS: list[dict[str, Any]] = [
    {"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]},
    {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "integer"}},
     "required": ["a", "b"], "additionalProperties": False},
    {"type": "object", "properties": {"flag": {"type": ["boolean", "null"], "description": "d"},
                                      "items": {"type": "array"}, "obj": {"type": "object"}}},
    {"type": "object", "properties": {"nested": {"type": "object", "properties": {
        "x": {"type": "integer"}}, "required": ["x"], "additionalProperties": False}}},
    {"type": "object", "properties": {"city": {"type": "string", "x-mcp-header": "City"}}},
    {"properties": {"n": {"type": "integer"}}},  # no type: non-objects pass
    {},
]
INSTANCES: list[Any] = [
    {}, {"message": "hi"}, {"message": 1}, {"message": None}, {"a": 1, "b": 2}, {"a": 1.5, "b": 2},
    {"a": 1, "b": 2.0}, {"a": True, "b": 1}, {"a": 1, "b": 2, "c": 3}, {"flag": None},
    {"flag": True, "items": [1], "obj": {}}, {"flag": 0}, {"items": {}}, {"nested": {"x": 1}},
    {"nested": {"x": 1, "y": 2}}, {"nested": {}}, {"nested": []}, {"city": "Köln"}, {"city": 3},
    {"n": 1}, {"n": "1"}, [], "text", 3, None,
]


@pytest.mark.parametrize("schema", SCHEMAS)
def test_the_quick_predicate_agrees_with_the_full_validator_whenever_it_accepts(schema):
    quick = validation._quick(schema)
    assert quick is not None
    full = validation.compile_schema(schema)
    for instance in INSTANCES:
        if quick(instance):
            assert full.is_valid(instance), (schema, instance)


def test_the_quick_predicate_accepts_the_common_valid_calls():
    quick = validation._quick(SCHEMAS[0])
    assert quick is not None and quick({"message": "hi"}) and not quick({"message": 1})
    assert validation.errors(SCHEMAS[0], {"message": "hi"}) == []


@pytest.mark.parametrize("schema", [
    {"type": "object", "properties": {"s": {"type": "string", "minLength": 2}}},
    {"type": "object", "properties": {"s": {"enum": ["a"]}}},
    {"type": "object", "additionalProperties": {"type": "string"}},
    {"type": "object", "properties": {"s": {"$ref": "#/$defs/x"}}, "$defs": {"x": {}}},
    {"$schema": "http://json-schema.org/draft-04/schema#", "type": "object"},
    {"type": "object", "properties": {"s": False}},
    {"type": "thing"},
])
def test_schemas_beyond_the_handled_keywords_get_no_predicate(schema):
    assert validation._quick(schema) is None or "$schema" in schema


def test_errors_still_come_from_the_full_validator():
    schema = SCHEMAS[1]
    for a, b in itertools.product([1, "x"], [2, 2.5]):
        expected = list(validation.compile_schema(schema).iter_errors({"a": a, "b": b}))
        assert len(validation.errors(schema, {"a": a, "b": b})) == len(expected)
    assert validation.errors(SCHEMAS[0], {}) == ["'message' is a required property"]
