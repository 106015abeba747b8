"""Rows mirrored from an upstream in the definitions' admin pages (issue 40 items 2 and 5).

On a mirrored row's change page every field but the operator's (``OVERRIDABLE``: enabled, name,
title, description, annotations, tags) is read-only (the upstream's, changed by syncing), a
prompt's arguments and messages too; a save records the overridable fields it changed in
``upstream_overrides``, so the next sync keeps them — as the REST API does. The lists show where a
row comes from and whether its upstream still lists it, with filters by upstream and by missing.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest
from django.utils.html import format_html

from ..validation.upstreams import OVERRIDABLE, is_mirrored


def _mirrors(model: Any) -> bool:
    return any(f.name == "upstream" for f in model._meta.concrete_fields)


def record_changed(row: Any, changed: list[str]) -> None:
    """Add the overridable fields among ``changed`` to a mirrored row's ``upstream_overrides``."""
    if is_mirrored(row):
        ours = set(changed) & set(OVERRIDABLE)
        row.upstream_overrides = sorted(set(row.upstream_overrides or []) | ours)


class MirroredAdminMixin:
    model: Any

    def get_list_filter(self, request: HttpRequest) -> Any:
        found = tuple(super().get_list_filter(request))  # type: ignore[misc]
        if not _mirrors(self.model):
            return found
        return (*found, ("upstream", admin.RelatedOnlyFieldListFilter), "upstream_missing")

    def get_list_display(self, request: HttpRequest) -> Any:
        found = tuple(super().get_list_display(request))  # type: ignore[misc]
        return (*found, "mirrored_from") if _mirrors(self.model) else found

    @admin.display(description="Upstream", ordering="upstream__name")
    def mirrored_from(self, row: Any) -> str:
        if not is_mirrored(row):
            return ""
        if row.upstream_missing:
            return format_html('{} <span class="upstream-missing" style="color:#c62828">(missing)</span>',
                               row.upstream.name)
        return str(row.upstream.name)

    def get_queryset(self, request: HttpRequest) -> Any:
        queryset = super().get_queryset(request)  # type: ignore[misc]
        return queryset.select_related("upstream") if _mirrors(self.model) else queryset

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        found = tuple(super().get_readonly_fields(request, obj))  # type: ignore[misc]
        if obj is None or not is_mirrored(obj):
            return found
        form_fields = [name for _, options in self.get_fieldsets(request, obj)  # type: ignore[attr-defined]
                       for name in options["fields"]]
        owned = [name for name in form_fields
                 if name not in OVERRIDABLE and name not in found and name != "opened_version"]
        return (*found, *owned, "mirrored_source")

    def get_fieldsets(self, request: HttpRequest, obj: Any = None) -> Any:
        found = super().get_fieldsets(request, obj)  # type: ignore[misc]
        if obj is None or not is_mirrored(obj):
            return found
        # Where it comes from, first: why most fields cannot be edited here.
        return (("Mirrored from an upstream", {"fields": ("mirrored_source",)}), *found)

    @admin.display(description="Source")
    def mirrored_source(self, row: Any) -> str:
        overrides = ", ".join(row.upstream_overrides or []) or "none"
        state = "missing from its last good listing (kept, not served)" if row.upstream_missing else "listed"
        return format_html(
            "Upstream <strong>{}</strong>, where it is called <code>{}</code>; {}. Only {} may be changed "
            "here (the rest is the upstream's: sync it). Overridden: {}.",
            row.upstream.name, row.upstream_name, state, ", ".join(OVERRIDABLE), overrides)

    def get_inline_instances(self, request: HttpRequest, obj: Any = None) -> Any:
        inlines = super().get_inline_instances(request, obj)  # type: ignore[misc]
        if obj is not None and is_mirrored(obj):
            for inline in inlines:  # a prompt's arguments and messages are the upstream's
                inline.has_add_permission = lambda *args, **kwargs: False
                inline.has_change_permission = lambda *args, **kwargs: False
                inline.has_delete_permission = lambda *args, **kwargs: False
        return inlines

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        record_changed(obj, list(form.changed_data))
        super().save_model(request, obj, form, change)  # type: ignore[misc]



