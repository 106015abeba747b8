"""What every registry model's admin shares: the read-only MCP JSON preview (``wire_preview``,
exactly what a client receives per protocol revision), the list of definitions written in code
beside each changelist, the "try it" page (``<id>/try/``), and the answer to a save that lost a
race (``VersionConflict``). ``admin.py`` registers the models with it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.core.exceptions import NON_FIELD_ERRORS, PermissionDenied, ValidationError
from django.db import models, transaction
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils.html import format_html, format_html_join

from ..history.admin import HistoryAdminMixin
from ..models import Prompt, Resource, ResourceTemplate, Tool
from ..models.concurrency import VersionConflict
from ..snapshot import prompt_definition, resource_definition, template_definition, tool_definition
from . import tryit
from .forms import (
    JSONEditorWidget,
    TryArgumentsForm,
)
from .list_row_form import ListRowForm
from .mirrored import MirroredAdminMixin, record_changed

PREVIEW_VERSIONS = ("2025-11-25", "2026-07-28")
JSON_WIDGETS = {models.JSONField: {"widget": JSONEditorWidget}}


def _pretty(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False)


def wire_preview(obj: Any) -> dict[str, Any]:
    """What ``tools/list`` (etc.) sends for this row, per protocol revision."""
    from mcp_protocol import versions  # the core's serialiser: the preview is exactly the wire

    if isinstance(obj, Tool):
        return {v: versions.tool_to_wire(tool_definition(obj), v) for v in PREVIEW_VERSIONS}
    if isinstance(obj, Resource):
        return {v: versions.resource_to_wire(resource_definition(obj), v) for v in PREVIEW_VERSIONS}
    if isinstance(obj, ResourceTemplate):
        return {v: versions.template_to_wire(template_definition(obj), v) for v in PREVIEW_VERSIONS}
    definition = prompt_definition(obj, list(obj.arguments.all()))
    return {v: versions.prompt_to_wire(definition, v) for v in PREVIEW_VERSIONS}


def preview_blocks(preview: dict[str, Any]) -> str:
    """One ``<pre>`` per protocol revision, or one for all when they send the same JSON."""
    blocks = list(preview.items())
    if all(wire == blocks[0][1] for _, wire in blocks):
        return format_html(
            '<p class="mcp-preview-revisions">{} (the same for each)</p>'
            '<pre class="mcp-preview" style="white-space: pre-wrap">{}</pre>',
            " and ".join(preview),
            _pretty(blocks[0][1]),
        )
    return format_html_join(
        "",
        '<p class="mcp-preview-revisions">{}</p>'
        '<pre class="mcp-preview" style="white-space: pre-wrap">{}</pre>',
        ((version, _pretty(wire)) for version, wire in blocks),
    )


def code_definitions(model: Any) -> list[dict[str, str]]:
    """The definitions of ``model``'s kind written in code: key, where, and the wire JSON."""
    from mcp_protocol import versions

    from ..code import definitions as code

    table = model.code_key[1]
    wire: dict[type[models.Model], Callable[[Any, str], dict[str, Any]]] = {
        Tool: versions.tool_to_wire,
        Resource: versions.resource_to_wire,
        ResourceTemplate: versions.template_to_wire,
        Prompt: versions.prompt_to_wire,
    }
    to_wire = wire[model]
    return [
        {
            "key": key,
            "origin": code.origin(entry.func),
            "preview": _pretty({v: to_wire(entry.definition, v) for v in PREVIEW_VERSIONS}),
        }
        for key, entry in sorted(code.TABLES[table].items())
    ]


def _validation_problem(row: models.Model) -> str | None:
    """Why ``row`` does not validate as a form save would validate it (None: it does)."""
    try:
        row.full_clean()
    except ValidationError as exc:
        return "; ".join(
            f"{name}: {' '.join(texts)}" if name != NON_FIELD_ERRORS else " ".join(texts)
            for name, texts in exc.message_dict.items()
        )
    return None


class RegistryAdmin(MirroredAdminMixin, HistoryAdminMixin, admin.ModelAdmin):
    formfield_overrides = JSON_WIDGETS
    readonly_fields: tuple[str, ...] = ("mcp_preview", "created_at", "updated_at")
    list_filter: tuple[str, ...] = ("enabled",)
    list_editable: tuple[str, ...] = ("enabled",)
    actions = ("enable", "disable")
    try_kind = ""

    @admin.action(description="Enable the selected %(verbose_name_plural)s", permissions=["change"])
    def enable(self, request: HttpRequest, queryset: models.QuerySet[Any]) -> None:
        self._set_enabled(request, queryset, True)

    @admin.action(description="Disable the selected %(verbose_name_plural)s", permissions=["change"])
    def disable(self, request: HttpRequest, queryset: models.QuerySet[Any]) -> None:
        self._set_enabled(request, queryset, False)

    def _set_enabled(self, request: HttpRequest, queryset: models.QuerySet[Any], enabled: bool) -> None:
        # Row by row in one transaction (changelist_view's author): one change set, each row's
        # version and history as an admin save leaves them; rows already so are left alone.
        # Enabling runs the validation a form save runs (issue 37 item 7): a row kept disabled
        # because it may not be served (an http tool whose host is not allowed) stays disabled,
        # named with the reason; the others are enabled. Disabling always goes through.
        refused: list[str] = []
        with transaction.atomic():
            rows = []
            for row in queryset.filter(enabled=not enabled):
                row.enabled = enabled
                record_changed(row, ["enabled"])  # a mirrored row's: kept over the upstream's
                if enabled and (problem := _validation_problem(row)):
                    refused.append(f"{row}: {problem}")
                    continue
                row.save()
                rows.append(row)
        verb = "enabled" if enabled else "disabled"
        self.message_user(request, f"{len(rows)} {self.opts.verbose_name_plural} {verb}.")
        for reason in refused:
            self.message_user(request, f"Not enabled: {reason}", messages.ERROR)

    def get_changelist_form(self, request: HttpRequest, **kwargs: Any) -> Any:
        # A list row's model errors on fields the row does not show are the row's errors, not a
        # 500 (list_row_form.py).
        kwargs.setdefault("form", ListRowForm)
        return super().get_changelist_form(request, **kwargs)

    @admin.display(description="MCP JSON preview")
    def mcp_preview(self, obj: Any) -> str:
        if obj is None or obj.pk is None:
            return "Save to see the JSON clients receive."
        # The stored row, not ``obj``: after a save that failed, ``obj`` holds the form's refused
        # values, which no client receives.
        stored = type(obj)._default_manager.filter(pk=obj.pk).first()
        if stored is None:
            return "Save to see the JSON clients receive."
        try:
            preview = wire_preview(stored)
        except Exception as exc:  # an invalid row must still open in the admin
            return f"No preview: {exc}"
        note = ""
        if any(getattr(obj, f.attname) != getattr(stored, f.attname) for f in obj._meta.concrete_fields):
            note = format_html(
                '<p class="mcp-preview-note"><strong>Unsaved changes are not shown:</strong> this is '
                "the saved version {}, what clients receive now.</p>",
                stored.version,
            )
        return format_html("{}{}", note, preview_blocks(preview))

    def get_urls(self) -> list[URLPattern]:
        info = self.opts.app_label, self.opts.model_name
        extra = [
            path(
                "<path:object_id>/try/",
                self.admin_site.admin_view(self.try_view),
                name="{}_{}_try".format(*info),
            )
        ]
        return extra + super().get_urls()

    def changelist_view(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> Any:
        context = {"code_definitions": code_definitions(self.model), **(extra_context or {})}
        return super().changelist_view(request, context)

    def change_view(
        self,
        request: HttpRequest,
        object_id: str,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        info = self.opts.app_label, self.opts.model_name
        context = {
            "try_url": reverse("admin:{}_{}_try".format(*info), args=[object_id]),
            **(extra_context or {}),
        }
        return super().change_view(request, object_id, form_url, context)

    def changeform_view(
        self,
        request: HttpRequest,
        object_id: str | None = None,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        try:
            # One admin save (the row and its inlines, one transaction) is one change set, by the
            # signed-in user (HistoryAdminMixin).
            return super().changeform_view(request, object_id, form_url, extra_context)
        except VersionConflict as exc:
            # Another save committed between this form's check and its own save (the form's
            # clean() catches the usual case, with the differing fields).
            self.message_user(
                request,
                f"Not saved: someone else saved it at the same moment ({exc}). "
                "Reload the page to edit the current version.",
                messages.ERROR,
            )
            return HttpResponseRedirect(request.get_full_path())

    def try_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        # The admin's own lookup: an id that is no primary key ("abc") is a missing object, a 404
        # as on the change page, not the ValueError (500) of a bare pk= filter.
        obj = self.get_object(request, unquote(object_id))
        if obj is None:
            raise Http404(f"No {self.opts.verbose_name} with id {object_id!r}.")
        # Running a definition can have effects (an http tool POSTs): change permission, not view.
        if not self.has_change_permission(request, obj):
            raise PermissionDenied
        form, outcome = self.run_try(request, obj)
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "original": obj,
            "form": form,
            "title": f"Try {self.opts.verbose_name} {obj}",
            "outcome": outcome,
            "result_json": _pretty(tryit.shown(outcome.result))
            if outcome and outcome.result is not None
            else None,
            "outcome_data": outcome.as_json() if outcome else None,
            **self.try_context(obj),
            "notifications_json": _pretty(outcome.notifications)
            if outcome and outcome.notifications
            else None,
            "media": self.media + form.media,
        }
        return TemplateResponse(request, "admin/registry/try_it.html", context)

    def run_try(self, request: HttpRequest, obj: Any) -> tuple[Any, tryit.Outcome | None]:
        raise NotImplementedError

    def try_context(self, obj: Any) -> dict[str, Any]:
        """More for the try page's template (a tool's input schema, for its arguments form)."""
        return {}


class ArgumentsTryMixin:
    def run_try(self, request: HttpRequest, obj: Any) -> tuple[Any, tryit.Outcome | None]:
        if request.method != "POST":
            return TryArgumentsForm(initial={"arguments": self.example_arguments(obj)}), None
        form = TryArgumentsForm(request.POST)
        if not form.is_valid():
            return form, None
        return form, self.run(obj, form.cleaned_data["arguments"], request.user.get_username())

    def example_arguments(self, obj: Any) -> dict[str, Any]:
        return {}

    def run(self, obj: Any, arguments: dict[str, Any], principal: str) -> tryit.Outcome:
        raise NotImplementedError
