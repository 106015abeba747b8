"""JSON read by the management API, its nesting bounded: DRF's JSON parser (the request body) and
DRF's serializer ``JSONField`` (a JSON value sent in a form field, as the browsable API sends it).

A body nested deeper than Python's recursion limit (``[[[[…`` 50,000 deep) made ``json.loads``
raise ``RecursionError``, which DRF's parser does not catch: a 500. One a little less deep parses,
then breaks whatever walks it recursively later (jsonschema, the validators). Here any body whose
objects and arrays nest more than ``MAX_DEPTH`` deep is a 400: keyed by the member that is too
deep when the body is an object (a field error, as the serializers report), else ``detail``; and a
form field's JSON nested too deep is that field's error.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import FieldDoesNotExist
from django.db import models
from rest_framework import exceptions, parsers, serializers

from registry.validation.validators import nests_deeper_than

MAX_DEPTH = 128  # serde_json's default; far above a registry document's (schemas: registry.validation)


class JSONParser(parsers.JSONParser):
    max_depth = MAX_DEPTH

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        too_deep = f"Objects and arrays nest more than {self.max_depth} deep."
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise exceptions.ParseError(f"JSON parse error - {too_deep}") from None
        if isinstance(data, dict):
            errors = {key: [too_deep] for key, value in data.items()
                      if nests_deeper_than(value, self.max_depth - 1)}
            if errors:
                raise exceptions.ParseError(errors)
        elif nests_deeper_than(data, self.max_depth):
            raise exceptions.ParseError(f"JSON parse error - {too_deep}")
        return data


# Model JSON fields without a default to tell their shape from (the others: a dict or list default).
OBJECTS_WITHOUT_DEFAULT = frozenset({"output_schema", "annotations", "execution", "content"})


def shape_of(model_field: models.Field[Any, Any]) -> str | None:
    """``object``, ``array`` or None (any JSON value) for a model's JSON field."""
    if model_field.has_default():
        default = model_field.get_default()
        return "object" if isinstance(default, dict) else "array" if isinstance(default, list) else None
    return "object" if model_field.name in OBJECTS_WITHOUT_DEFAULT else None


class JSONField(serializers.JSONField):
    """A JSON value nested at most ``MAX_DEPTH`` deep and, for a model's field whose values are
    objects (or arrays), one of those: ``shape`` is set when the field is bound to a model
    serializer, and typed in the OpenAPI document (``schema.JSONFieldShape``)."""

    default_error_messages = {
        "too_deep": f"Objects and arrays nest more than {MAX_DEPTH} deep.",
        "shape": "Expected a JSON {shape}, got {got}.",
    }
    shape: str | None = None

    def bind(self, field_name: str, parent: Any) -> None:
        super().bind(field_name, parent)
        model = getattr(getattr(parent, "Meta", None), "model", None)
        if model is not None and self.source != "*":
            try:
                self.shape = shape_of(model._meta.get_field(self.source))
            except FieldDoesNotExist:
                self.shape = None

    def to_internal_value(self, data: Any) -> Any:
        try:
            value = super().to_internal_value(data)  # json.loads of a form field's string
        except RecursionError:
            self.fail("too_deep")
        if nests_deeper_than(value, MAX_DEPTH):
            self.fail("too_deep")
        # None: "null" sent in a form field; NotNullSerializer refuses it where the column does.
        expected = {"object": dict, "array": list}.get(self.shape or "")
        if expected is not None and value is not None and not isinstance(value, expected):
            self.fail("shape", shape=self.shape, got=_json_type(value))
        return value


def _json_type(value: Any) -> str:
    names = {dict: "object", list: "array", str: "string", bool: "boolean", int: "number", float: "number"}
    return names.get(type(value), type(value).__name__)


# For ModelSerializer.serializer_field_mapping: model JSON fields become the bounded JSONField.
FIELD_MAPPING = {**serializers.ModelSerializer.serializer_field_mapping, models.JSONField: JSONField}
