"""Serializers of the definitions, validated exactly as the admin validates them.

DRF's ``ModelSerializer`` already runs each model field's validators (names, schemas, URIs, …)
and uniqueness; ``validate()`` then builds the row as it would be saved and runs the model's
``full_clean()`` (its ``clean()``: the rules across fields, such as "a handler tool needs a
registered handler"), so a definition the admin refuses is refused here with the same messages.
Prompts carry their ``arguments`` and ``messages`` nested, written with the prompt in one request
(their order is their position); each child is ``full_clean``-ed too, errors keyed by index.
"""

from __future__ import annotations

import copy
from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import models
from drf_spectacular.utils import OpenApiExample, extend_schema_serializer
from rest_framework import serializers

from mcp_django.compat.django import forget_prefetched
from registry.models import Prompt, PromptArgument, PromptMessage, Resource, ResourceTemplate, Tool
from registry.validation.upstreams import OVERRIDABLE, is_mirrored, owned_changes, record_overrides

from .bodies import StrictBodyMixin
from .errors import drf_errors, raise_drf
from .parsers import FIELD_MAPPING

READ_ONLY = ("id", "version", "created_at", "updated_at")


class NotNullSerializer(StrictBodyMixin, serializers.ModelSerializer):
    """Refuses ``null`` for columns that cannot hold it. DRF checks ``allow_null`` before parsing,
    so a JSON field sent as the form value ``null`` gets through; and ``full_clean`` skips a
    ``blank`` field whose value is ``None``. Without this the database would refuse it: a 500."""

    serializer_field_mapping = FIELD_MAPPING

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        columns = {f.name: f for f in self.Meta.model._meta.concrete_fields}
        nulls = {name: [serializers.ErrorDetail("This field may not be null.", code="null")]
                 for name, value in attrs.items() if value is None and name in columns
                 and not columns[name].null}
        if nulls:
            raise serializers.ValidationError(nulls)
        return attrs


class DefinitionSerializer(NotNullSerializer):
    """Base of the four definition serializers: ``full_clean`` the row as it would be saved."""

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        attrs = super().validate(attrs)
        model = self.Meta.model
        fields = {k: v for k, v in attrs.items() if k in {f.name for f in model._meta.concrete_fields}}
        if self.instance is not None:
            mirrored_rules(self.instance, attrs)
            row = copy.copy(self.instance)
            for name, value in fields.items():
                setattr(row, name, value)
        else:
            row = model(**fields)
        try:
            row.full_clean()
        except DjangoValidationError as exc:
            raise_drf(exc)
        # What clean() itself set is saved too (a tool's switch of kind clears the other kinds'
        # fields, ``Tool.clear_other_kinds``), as the admin's form saves its cleaned instance.
        attrs.update(cleared_by_clean(row, self.instance, attrs))
        return attrs


CHILD_LISTS = ("arguments", "messages")  # a prompt's: the upstream's too


def _children_differ(instance: Any, key: str, sent: list[dict[str, Any]]) -> bool:
    stored = list(getattr(instance, key).all())
    return len(sent) != len(stored) or any(
        getattr(row, name) != value
        for item, row in zip(sent, stored, strict=True) for name, value in item.items())


def mirrored_rules(instance: Any, attrs: dict[str, Any]) -> None:
    """A row mirrored from an upstream (issue 40 item 2): its upstream-owned fields are a 400 naming
    them; an edit of one of ours (``OVERRIDABLE``) is recorded in ``upstream_overrides``, so the
    next sync keeps it. A field sent back unchanged (a GET-modify-PUT) is no edit."""
    if not is_mirrored(instance):
        return
    owned = owned_changes(instance, {k: v for k, v in attrs.items() if k not in CHILD_LISTS})
    owned += [key for key in CHILD_LISTS if key in attrs and _children_differ(instance, key, attrs[key])]
    if owned:
        upstream = instance.upstream.name if instance.upstream else "an upstream"
        raise serializers.ValidationError({name: [
            f"Mirrored from the upstream {upstream!r}: {name} is the upstream's (sync it to change it). "
            f"Only {', '.join(OVERRIDABLE)} may be changed here."] for name in owned})
    record_overrides(instance, attrs)
    attrs["upstream_overrides"] = instance.upstream_overrides


def cleared_by_clean(row: Any, instance: Any, attrs: dict[str, Any]) -> dict[str, Any]:
    """The kind fields (``Tool.KIND_FIELDS``) that ``full_clean`` reset on ``row``, unlike what the
    request gave or the stored row holds (a new row's unsent fields have their defaults anyway)."""
    kind_fields = {name for names in getattr(row, "KIND_FIELDS", {}).values() for name in names}
    return {
        name: getattr(row, name)
        for name in kind_fields
        if (name in attrs or instance is not None)
        and getattr(row, name) != (attrs[name] if name in attrs else getattr(instance, name))
    }


@extend_schema_serializer(examples=[OpenApiExample("A template tool", request_only=True, value={
    "name": "greet", "title": "Greet", "kind": "template", "template_text": "Hello {{ who }}",
    "input_schema": {"type": "object", "properties": {"who": {"type": "string"}}, "required": ["who"]},
    "annotations": {"readOnlyHint": True}})])
class ToolSerializer(DefinitionSerializer):
    class Meta:
        model = Tool
        fields = (
            "id", "name", "title", "description", "enabled", "input_schema", "output_schema",
            "annotations", "execution", "icons", "meta", "tags", "kind", "task_support", "handler",
            "always_load", "approval", "template_text", "template_structured", "http_method", "http_url",
            "http_headers",
            "http_body_template", "http_result_pointer", "http_timeout", "http_max_concurrency",
            "http_secret_header", "http_secret_env", "http_signing_secret_env", "http_signing_scheme",
            "http_forward_principal", "http_forward_trace", "http_connection", "ui_resource_uri",
            "ui_visibility",
            "version",
            "created_at", "updated_at",
        )
        read_only_fields = READ_ONLY


@extend_schema_serializer(examples=[OpenApiExample("A text resource", request_only=True, value={
    "uri": "file:///notes/today.md", "name": "today", "kind": "text", "mime_type": "text/markdown",
    "text": "# Today"})])
class ResourceSerializer(DefinitionSerializer):
    class Meta:
        model = Resource
        fields = (
            "id", "uri", "name", "title", "description", "enabled", "kind", "mime_type", "text",
            "blob", "handler", "size", "annotations", "icons", "meta", "tags", "ui_csp", "ui_permissions",
            "version", "created_at", "updated_at",
        )
        read_only_fields = READ_ONLY


@extend_schema_serializer(examples=[OpenApiExample("A text template", request_only=True, value={
    "uri_template": "file:///logs/{day}", "name": "logs", "kind": "text",
    "text_template": "The log of {{ day }}", "completions": {"day": ["monday", "tuesday"]}})])
class ResourceTemplateSerializer(DefinitionSerializer):
    class Meta:
        model = ResourceTemplate
        fields = (
            "id", "uri_template", "name", "title", "description", "enabled", "kind", "mime_type",
            "text_template", "handler", "completions", "completion_handler", "annotations", "icons",
            "meta", "tags", "version", "created_at", "updated_at",
        )
        read_only_fields = READ_ONLY


class PromptArgumentSerializer(NotNullSerializer):
    class Meta:
        model = PromptArgument
        fields = ("name", "title", "description", "required", "completion_values")


class PromptMessageSerializer(NotNullSerializer):
    class Meta:
        model = PromptMessage
        fields = ("role", "content")


def _clean_children(model: type[models.Model], items: list[dict[str, Any]]) -> dict[int, Any]:
    """``full_clean`` each child as it would be stored (its prompt is not there yet); errors by
    index, in DRF's dict form for lists (``LIST_SERIALIZER_ERRORS_AS_DICT``)."""
    errors: dict[int, Any] = {}
    for position, item in enumerate(items):
        try:
            model(position=position, **item).full_clean(exclude=["prompt"], validate_unique=False)
        except DjangoValidationError as exc:
            found = drf_errors(exc)
            errors[position] = found if isinstance(found, dict) else {"non_field_errors": found}
    return errors


@extend_schema_serializer(examples=[OpenApiExample("A prompt with arguments and messages", request_only=True,
                                                   value={
    "name": "review", "title": "Review code",
    "arguments": [{"name": "code", "required": True}, {"name": "language", "completion_values": ["python"]}],
    "messages": [{"role": "user",
                  "content": {"type": "text", "text": "Review this {{ language }}: {{ code }}"}}]})])
class PromptSerializer(DefinitionSerializer):
    arguments = PromptArgumentSerializer(many=True, required=False)
    messages = PromptMessageSerializer(many=True, required=False)

    class Meta:
        model = Prompt
        fields = (
            "id", "name", "title", "description", "enabled", "handler", "completion_handler",
            "arguments", "messages", "icons", "meta", "tags", "version", "created_at", "updated_at",
        )
        read_only_fields = READ_ONLY

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        attrs = super().validate(attrs)
        errors: dict[str, Any] = {}
        for key, model in (("arguments", PromptArgument), ("messages", PromptMessage)):
            if key in attrs:
                found = _clean_children(model, attrs[key])
                if found:
                    errors[key] = found
        seen: set[str] = set()
        for index, argument in enumerate(attrs.get("arguments") or []):
            if argument["name"] in seen:
                entries = errors.setdefault("arguments", {})
                entries.setdefault(index, {}).setdefault("name", []).append(
                    f"Another argument of this prompt is already named {argument['name']!r}."
                )
            seen.add(argument["name"])
        if errors:
            raise serializers.ValidationError(errors)
        return attrs

    def create(self, validated_data: dict[str, Any]) -> Prompt:
        arguments = validated_data.pop("arguments", [])
        messages = validated_data.pop("messages", [])
        prompt = Prompt.objects.create(**validated_data)
        self._write_children(prompt, arguments, messages)
        return prompt

    def update(self, instance: Prompt, validated_data: dict[str, Any]) -> Prompt:
        arguments = validated_data.pop("arguments", None)
        messages = validated_data.pop("messages", None)
        for name, value in validated_data.items():
            setattr(instance, name, value)
        instance.save()
        self._write_children(instance, arguments, messages)
        return instance

    @staticmethod
    def _write_children(prompt: Prompt, arguments: list[dict[str, Any]] | None,
                        messages: list[dict[str, Any]] | None) -> None:
        """Replace the lists that were sent (a PATCH without one keeps it). The caller's
        transaction makes the prompt and its children one change, published once."""
        for model, items in ((PromptArgument, arguments), (PromptMessage, messages)):
            if items is None:
                continue
            model._default_manager.filter(prompt=prompt).delete()
            model._default_manager.bulk_create(
                [model(prompt=prompt, position=i, **item) for i, item in enumerate(items)]
            )
        forget_prefetched(prompt)  # the response shows what is stored now
