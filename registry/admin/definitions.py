"""The registry in the Django admin: every model editable, prompt arguments and messages inline,
JSON fields in a JSON editor, a read-only preview of the exact MCP JSON a client receives, and a
"try it" page per definition (``<id>/try/``) that runs it through the provider (``tryit.py``).
Each list also shows, read-only, the definitions of that kind written in code (``registry.code``),
so operators see everything the endpoint serves.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.db import models
from django.http import HttpRequest, HttpResponse
from django.urls import URLPattern, path, reverse

from ..models import Prompt, PromptArgument, PromptMessage, Resource, ResourceTemplate, Tool
from ..transfer.openapi import upload
from . import mcp_apps as app_admin
from . import tool_trial, tryit
from .base import ArgumentsTryMixin, RegistryAdmin
from .forms import (
    JSONEditorWidget,
    PromptForm,
    PromptMessageForm,
    ResourceForm,
    ResourceTemplateForm,
    ToolForm,
    TryURIForm,
)
from .inline_order import OrderedForm, OrderedFormSet


@admin.register(Tool)
class ToolAdmin(ArgumentsTryMixin, RegistryAdmin):
    form = ToolForm
    list_display = ("name", "title", "kind", "enabled", "updated_at")

    class Media:
        js = ("registry/tool-form.js",)  # the kind's fields, the try-it panel, the arguments form

    list_filter = ("enabled", "kind", "always_load", "approval")
    search_fields = ("name", "title", "description")
    fieldsets = (
        (None, {"fields": ("name", "title", "description", "enabled", "always_load", "approval",
                           "opened_version")}),
        ("Schemas", {"fields": ("input_schema", "output_schema")}),
        (
            "What it does",
            {
                "fields": (
                    "kind",
                    "handler",
                    "task_support",
                    "template_text",
                    "template_structured",
                    "http_method",
                    "http_url",
                    "http_headers",
                    "http_body_template",
                    "http_result_pointer",
                    "http_timeout",
                    "http_max_concurrency",
                    "http_secret_header",
                    "http_secret_env",
                    "http_signing_secret_env",
                    "http_signing_scheme",
                    "http_forward_principal",
                    "http_forward_trace",
                    "http_connection",
                )
            },
        ),
        ("App (MCP Apps)", {"fields": ("ui_resource_uri", "ui_visibility", "app_preview")}),
        ("Metadata", {"classes": ("collapse",),
                      "fields": ("annotations", "icons", "meta", "execution", "tags")}),
        ("Preview", {"fields": ("mcp_preview", "created_at", "updated_at")}),
    )

    def example_arguments(self, obj: Tool) -> dict[str, Any]:
        # Only the defaults the schema gives: a "" for a required string would look like a value.
        props = (obj.input_schema or {}).get("properties") or {}
        return {name: prop["default"] for name, prop in props.items() if "default" in prop}

    def run(self, obj: Tool, arguments: dict[str, Any], principal: str) -> tryit.Outcome:
        return tryit.try_tool(obj, arguments, principal)

    def try_context(self, obj: Tool) -> dict[str, Any]:
        return {"input_schema": obj.input_schema}

    def changeform_view(
        self,
        request: HttpRequest,
        object_id: str | None = None,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        info = self.opts.app_label, self.opts.model_name
        args = [object_id] if object_id else []
        context = {
            "try_unsaved_url": reverse(f"admin:{info[0]}_{info[1]}_try_unsaved{'_change' if args else ''}",
                                       args=args),
            **(extra_context or {}),
        }
        return super().changeform_view(request, object_id, form_url, context)

    readonly_fields = (*RegistryAdmin.readonly_fields, "app_preview")

    @admin.display(description="App preview")
    def app_preview(self, obj: Tool) -> str:
        linked = Resource.objects.filter(uri=obj.ui_resource_uri).first() if obj.ui_resource_uri else None
        return app_admin.preview_frame(linked)

    def get_urls(self) -> list[URLPattern]:
        view = self.admin_site.admin_view(self.import_openapi_view)
        trial = self.admin_site.admin_view(self.try_unsaved_view)
        return [
            path("import-openapi/", view, name="registry_tool_import_openapi"),
            path("try-unsaved/", trial, name="registry_tool_try_unsaved"),
            path("<path:object_id>/try-unsaved/", trial, name="registry_tool_try_unsaved_change"),
            *super().get_urls(),
        ]

    def try_unsaved_view(self, request: HttpRequest, object_id: str | None = None) -> HttpResponse:
        """Runs the change form's data as posted, without saving it (``tryit.try_tool``)."""
        return tool_trial.run_form(self, request, object_id)

    def import_openapi_view(self, request: HttpRequest) -> HttpResponse:
        """An OpenAPI document uploaded as http tools (``openapi/upload.py``)."""
        return upload.upload_view(self, request)


@admin.register(Resource)
class ResourceAdmin(RegistryAdmin):
    form = ResourceForm
    list_display = ("uri", "name", "kind", "mime_type", "enabled", "updated_at")
    list_filter = ("enabled", "kind")
    search_fields = ("uri", "name", "title", "description")
    fieldsets = (
        (None, {"fields": ("uri", "name", "title", "description", "enabled", "opened_version")}),
        ("Content", {"fields": ("kind", "mime_type", "text", "blob", "handler", "size")}),
        ("App view (MCP Apps)", {"fields": ("ui_csp", "ui_permissions", "app_preview")}),
        ("Metadata", {"classes": ("collapse",), "fields": ("annotations", "icons", "meta", "tags")}),
        ("Preview", {"fields": ("mcp_preview", "created_at", "updated_at")}),
    )
    readonly_fields = (*RegistryAdmin.readonly_fields, "app_preview")

    @admin.display(description="App preview")
    def app_preview(self, obj: Resource) -> str:
        return app_admin.preview_frame(obj)

    def get_urls(self) -> list[URLPattern]:
        view = self.admin_site.admin_view(self.app_view)
        preview = path("<path:object_id>/app-view/", view, name="registry_resource_app_view")
        return [preview, *super().get_urls()]

    def app_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        return app_admin.app_view(self, request, object_id)

    def run_try(self, request: HttpRequest, obj: Resource) -> tuple[Any, tryit.Outcome | None]:
        form = TryURIForm(initial={"uri": obj.uri})
        outcome = (
            tryit.try_read(obj.uri, obj.enabled, request.user.get_username())
            if request.method == "POST"
            else None
        )
        return form, outcome


@admin.register(ResourceTemplate)
class ResourceTemplateAdmin(RegistryAdmin):
    form = ResourceTemplateForm
    list_display = ("name", "uri_template", "kind", "enabled", "updated_at")
    list_filter = ("enabled", "kind")
    search_fields = ("name", "uri_template", "title", "description")
    fieldsets = (
        (None, {"fields": ("uri_template", "name", "title", "description", "enabled", "opened_version")}),
        ("Content", {"fields": ("kind", "mime_type", "text_template", "handler")}),
        ("Completion", {"fields": ("completions", "completion_handler")}),
        ("Metadata", {"classes": ("collapse",), "fields": ("annotations", "icons", "meta", "tags")}),
        ("Preview", {"fields": ("mcp_preview", "created_at", "updated_at")}),
    )

    def run_try(self, request: HttpRequest, obj: ResourceTemplate) -> tuple[Any, tryit.Outcome | None]:
        """Reads only a URI of this template, and only what the user may view: a URI the registry
        serves as a concrete resource (read before any template) needs the resources' view
        permission too (issue 24 item 6). The template's own is implied by the change permission
        the page asks for."""
        from mcp_protocol.uri_template import parse_template

        if request.method != "POST":
            return TryURIForm(initial={"uri": parse_template(obj.uri_template).example_uri("1")}), None
        form = TryURIForm(request.POST)
        if not form.is_valid():
            return form, None
        uri = form.cleaned_data["uri"]
        if parse_template(obj.uri_template).match(uri) is None:
            form.add_error("uri", f"{uri} does not match the template {obj.uri_template}: this page "
                                  "reads only what the template serves.")
            return form, None
        if tryit.serves_resource(uri) and not self.admin_site.get_model_admin(Resource).has_view_permission(
            request, Resource.objects.filter(uri=uri).first()
        ):
            form.add_error("uri", f"{uri} is served as a resource of its own, which you may not view.")
            return form, None
        return form, tryit.try_read(uri, obj.enabled, request.user.get_username())


class PromptArgumentInline(admin.StackedInline):
    """Stacked, a few fields a line, so a prompt fits a 1280 px page; ordered by dragging."""

    model = PromptArgument
    form = OrderedForm
    formset = OrderedFormSet
    extra = 0
    formfield_overrides = {
        models.JSONField: {"widget": JSONEditorWidget(attrs={"rows": 2})},
        models.TextField: {"widget": forms.Textarea(attrs={"rows": 2, "class": "vLargeTextField"})},
    }
    fields = (("position", "name", "required"), "title", "description", "completion_values")


class PromptMessageInlineForm(OrderedForm, PromptMessageForm):
    pass


class PromptMessageInline(admin.StackedInline):
    model = PromptMessage
    form = PromptMessageInlineForm
    formset = OrderedFormSet
    extra = 0
    fields = (("position", "role"), "content")


@admin.register(Prompt)
class PromptAdmin(ArgumentsTryMixin, RegistryAdmin):
    form = PromptForm
    inlines = (PromptArgumentInline, PromptMessageInline)
    list_display = ("name", "title", "enabled", "updated_at")
    search_fields = ("name", "title", "description")
    fieldsets = (
        (None, {"fields": ("name", "title", "description", "enabled", "opened_version")}),
        ("Code", {"fields": ("handler", "completion_handler")}),
        ("Metadata", {"classes": ("collapse",), "fields": ("icons", "meta", "tags")}),
        ("Preview", {"fields": ("mcp_preview", "created_at", "updated_at")}),
    )

    def example_arguments(self, obj: Prompt) -> dict[str, Any]:
        return {a.name: "" for a in obj.arguments.all() if a.required}

    def run(self, obj: Prompt, arguments: dict[str, Any], principal: str) -> tryit.Outcome:
        return tryit.try_prompt(obj, arguments, principal)
from . import skills as skill_admin  # noqa: E402, F401  (registers the skills admin)
