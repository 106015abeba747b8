"""The registry's resources and resource templates (``Definition`` rows: see ``base.py``)."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import models

from mcp_protocol.uri_template import parse_template

from ..validation import apps_ui
from ..validation.templating import placeholders
from ..validation.validators import (
    validate_annotations,
    validate_base64,
    validate_name,
    validate_uri,
    validate_uri_template,
)
from .base import Definition, check_handler, mime_type_field
from .upstreams import UpstreamMirror


class Resource(Definition, UpstreamMirror):
    mcp_kind = "resources"
    selection_kind = "resources"
    remembered = ("uri", "tags")
    code_key = ("uri", "RESOURCES")

    class Kind(models.TextChoices):
        TEXT = "text", "Stored text"
        BINARY = "binary", "Stored binary (base64)"
        HANDLER = "handler", "Handler registered in code"
        UPSTREAM = "upstream", "Mirrored from an upstream MCP server"

    uri = models.CharField("URI", max_length=2048, unique=True, validators=[validate_uri])
    name = models.CharField(max_length=128, validators=[validate_name])
    mime_type = mime_type_field()
    size = models.PositiveBigIntegerField(
        null=True, blank=True, help_text="Bytes; computed for stored content if empty."
    )
    annotations = models.JSONField(null=True, blank=True, validators=[validate_annotations])
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.TEXT)
    text = models.TextField(blank=True)
    blob = models.TextField("binary content (base64)", blank=True, validators=[validate_base64])
    handler = models.CharField(
        max_length=128, blank=True, help_text="handler kind: a @resource_handler name."
    )
    # MCP Apps (validation/apps_ui.py): for a view (text/html;profile=mcp-app), what its sandbox may reach.
    ui_csp = models.JSONField(
        "app CSP domains", default=dict, blank=True,
        help_text='e.g. {"connectDomains": ["https://api.example.com"], "resourceDomains": []}',
    )
    ui_permissions = models.JSONField(
        "app permissions", default=list, blank=True,
        help_text='e.g. ["clipboardWrite"]; among camera, microphone, geolocation, clipboardWrite.',
    )

    class Meta:
        ordering = ["uri"]

    def __str__(self) -> str:
        return self.uri

    def change_uris(self) -> list[str]:
        """This URI, and the old one when the save changed it (remembered by ``signals.py``
        before the save), so subscribers of either hear about it."""
        uris = [self.uri]
        old = self.__dict__.get("_old_uri")
        if old and old != self.uri:
            uris.append(old)
        return uris

    def clean(self) -> None:
        errors: dict[str, str] = {}
        if self.kind == self.Kind.BINARY and not self.blob:
            errors["blob"] = "A binary resource needs base64 content."
        if self.kind == self.Kind.HANDLER:
            check_handler(errors, "handler", "resource", self.handler, required=True)
        errors.update(apps_ui.resource_errors(self.uri, self.mime_type, self.ui_csp, self.ui_permissions))
        if errors:
            raise ValidationError(errors)


class ResourceTemplate(Definition, UpstreamMirror):
    mcp_kind = "resources"
    selection_kind = "resource_templates"
    remembered = ("uri_template", "tags")
    code_key = ("uri_template", "TEMPLATES")

    class Kind(models.TextChoices):
        TEXT = "text", "Text template"
        HANDLER = "handler", "Handler registered in code"
        UPSTREAM = "upstream", "Mirrored from an upstream MCP server"

    uri_template = models.CharField(
        "URI template",
        max_length=2048,
        unique=True,
        validators=[validate_uri_template],
        help_text="RFC 6570, e.g. file:///logs/{date}/{name}",
    )
    name = models.CharField(max_length=128, unique=True, validators=[validate_name])
    mime_type = mime_type_field()
    annotations = models.JSONField(null=True, blank=True, validators=[validate_annotations])
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.TEXT)
    text_template = models.TextField(blank=True, help_text="text kind: {{ variable }} placeholders.")
    handler = models.CharField(
        max_length=128, blank=True, help_text="handler kind: a @resource_handler name."
    )
    completions = models.JSONField(
        default=dict, blank=True, help_text='Completion values per variable, e.g. {"id": ["1", "2"]}.'
    )
    completion_handler = models.CharField(max_length=128, blank=True, help_text="A @completion_handler name.")

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.uri_template

    def clean(self) -> None:
        errors: dict[str, str] = {}
        if self.kind == self.Kind.HANDLER:
            check_handler(errors, "handler", "resource", self.handler, required=True)
        check_handler(errors, "completion_handler", "completion", self.completion_handler, required=False)
        if self.kind == self.Kind.TEXT and not self.text_template.strip():
            errors["text_template"] = "A text template resource needs a text template."
        try:
            variables = set(parse_template(self.uri_template).variables)
        except ValueError:
            variables = None  # the field validator reports the syntax error
        if not isinstance(self.completions, dict):
            errors["completions"] = 'Completion values must be an object like {"variable": ["value", ...]}.'
        elif variables is not None:
            unknown = set(self.completions) - variables
            if unknown:
                errors["completions"] = f"Not variables of the template: {', '.join(sorted(unknown))}."
            elif not all(
                isinstance(v, list) and all(isinstance(s, str) for s in v) for v in self.completions.values()
            ):
                errors["completions"] = "Each variable's completion values must be a list of strings."
            if self.kind == self.Kind.TEXT and self.text_template:
                unknown_refs = placeholders(self.text_template) - variables
                if unknown_refs:
                    errors["text_template"] = (
                        f"Refers to names that are not template variables: {', '.join(sorted(unknown_refs))}."
                    )
        if errors:
            raise ValidationError(errors)
