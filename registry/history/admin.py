"""The history in the admin: every version of a definition with its field-by-field diff (JSON fields
key by key) and a revert button, and the change sets (one admin save, API request or import each)
with their diffs and a revert of the whole set (``versions.py`` does the work).

- ``HistoryAdminMixin`` replaces a definition's "History" page (``<id>/history/``: also for a
  deleted row, whose versions stay) and adds ``<id>/history/<version>/revert/`` (POST). The form
  carries the row's version as the page showed it: if the row moved on meanwhile, nothing is
  written and the page says so (the admin's ``If-Match``).
- ``ChangeSetAdmin``: the change sets, read-only; each one's page lists what it changed and offers
  its revert (POST), refused as a whole with the conflicts listed.
A revert is an ordinary edit by the signed-in user from the admin (a change set of its own),
published on commit like any save.
"""

from __future__ import annotations

import json
from typing import Any

from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse

from mcp_django.view_only_admin import ViewOnlyAdmin

from ..changes.authorship import authored, of_user
from ..models import ChangeSet
from . import versions

TYPES = {"+": "created", "~": "changed", "-": "deleted"}


def shown(diff: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A diff's values as indented JSON (absent: an empty cell)."""
    return [
        {
            "path": c["path"],
            **{
                side: "" if c[side] is None else json.dumps(c[side], indent=2, ensure_ascii=False)
                for side in ("before", "after")
            },
        }
        for c in diff
    ]


def _may_revert(request: HttpRequest, opts: Any) -> bool:
    return all(
        request.user.has_perm(f"{opts.app_label}.{a}_{opts.model_name}") for a in ("add", "change", "delete")
    )


class HistoryAdminMixin:
    """For the ``ModelAdmin`` of a definition (``versions.DEFINITIONS``): its versions, and the
    author of every write from its pages (a save with its inlines, a delete, a list action: one
    change set each, by the signed-in user from the admin)."""

    model: Any
    opts: Any
    admin_site: Any

    def changeform_view(
        self,
        request: HttpRequest,
        object_id: str | None = None,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> Any:
        with authored(of_user(request.user, "admin")):
            return super().changeform_view(request, object_id, form_url, extra_context)  # type: ignore[misc]

    def delete_view(
        self, request: HttpRequest, object_id: str, extra_context: dict[str, Any] | None = None
    ) -> Any:
        with authored(of_user(request.user, "admin")):
            return super().delete_view(request, object_id, extra_context)  # type: ignore[misc]

    def changelist_view(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> Any:
        with authored(of_user(request.user, "admin")):  # its actions (delete selected) write
            return super().changelist_view(request, extra_context)  # type: ignore[misc]

    def get_urls(self) -> list[URLPattern]:
        info = self.opts.app_label, self.opts.model_name
        extra = [
            path(
                "<path:object_id>/history/<int:version>/revert/",
                self.admin_site.admin_view(self.revert_view),
                name="{}_{}_revert".format(*info),
            )
        ]
        return extra + super().get_urls()  # type: ignore[misc]

    def history_view(
        self, request: HttpRequest, object_id: str, extra_context: dict[str, Any] | None = None
    ) -> Any:
        # The change sets' permission and the kind's own: past states are the kind's data.
        user = request.user
        if not (user.has_perm("registry.view_changeset") and versions.may_read(user, self.model)):
            raise PermissionDenied
        pk = _pk(object_id)
        records = list(versions.versions(self.model, pk).select_related("changeset"))
        if not records:
            raise Http404(f"No history for {self.opts.verbose_name} {object_id!r}.")
        current = self.model._default_manager.filter(pk=pk).first()
        rows = []
        for n, record in enumerate(records):
            older = records[n + 1] if n + 1 < len(records) else None
            rows.append(
                {
                    "record": record,
                    "type": TYPES[record.history_type],
                    "diff": shown(
                        versions.diff(
                            None if older is None else versions.state(older), versions.state(record)
                        )
                    ),
                }
            )
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "object_id": pk,
            "current": current,
            "title": f"History of {self.opts.verbose_name} {versions.key_of(self.model, records[0])}",
            "rows": rows,
            "may_revert": _may_revert(request, self.opts),
            **(extra_context or {}),
        }
        return TemplateResponse(request, "admin/registry/object_history.html", context)

    def revert_view(self, request: HttpRequest, object_id: str, version: int) -> HttpResponse:
        if request.method != "POST":
            return HttpResponseRedirect(_history_url(self.opts, object_id))
        if not _may_revert(request, self.opts):
            raise PermissionDenied
        pk = _pk(object_id)
        seen = request.POST.get("seen_version", "")
        if_match = None if seen == "" else ["*" if seen == "*" else f'"{seen}"']
        try:
            with authored(of_user(request.user, "admin")):
                row = versions.revert_object(self.model, pk, version, if_match)
        except LookupError as exc:
            raise Http404(str(exc)) from None
        except versions.PreconditionFailed as exc:
            messages.error(
                request, f"Not reverted: it changed since this page was shown ({exc}). Look again."
            )
            return HttpResponseRedirect(_history_url(self.opts, object_id))
        except versions.RevertRefused as exc:
            messages.error(request, f"Not reverted: {exc}")
            return HttpResponseRedirect(_history_url(self.opts, object_id))
        what = "deleted" if row is None else f"now at version {row.version}"
        messages.success(request, f"Reverted to version {version}: {what}.")
        return HttpResponseRedirect(_history_url(self.opts, object_id))


@admin.register(ChangeSet)
class ChangeSetAdmin(ViewOnlyAdmin):  # deleted only by prune_history (retention)
    list_display = ("id", "created_at", "source", "actor", "kinds", "note")
    list_filter = ("source",)
    search_fields = ("actor", "note")
    readonly_fields = ("created_at", "source", "actor", "user", "note", "kinds", "uris")
    fields = readonly_fields

    def get_urls(self) -> list[URLPattern]:
        extra = [
            path(
                "<int:changeset>/revert/",
                self.admin_site.admin_view(self.revert_view),
                name="registry_changeset_revert",
            )
        ]
        return extra + super().get_urls()

    def change_view(
        self,
        request: HttpRequest,
        object_id: str,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> Any:
        # The admin's own answers first (403 without the permission, "does not exist" for an id
        # naming nothing: -1, a huge number): the diffs below are computed for a real change set
        # only (tests/security/test_route_walk.py found the 500s of a bare int here).
        allowed = self.has_view_or_change_permission(request)
        if not allowed or self.get_object(request, unquote(object_id)) is None:
            return super().change_view(request, object_id, form_url, extra_context)
        changeset = _pk(object_id)
        changes = []
        touched = versions.touched(changeset)
        readable = [(m, pk) for m, pk in touched if versions.may_read(request.user, m)]
        for model, pk in readable:
            latest = versions.versions(model, pk).first()
            changes.append(
                {
                    "kind": versions.kind_of(model),
                    "opts": model._meta,
                    "id": pk,
                    "key": versions.key_of(model, latest),
                    "diff": shown(
                        versions.diff(
                            versions.state_at(model, pk, changeset - 1),
                            versions.state_at(model, pk, changeset),
                        )
                    ),
                }
            )
        context = {
            "changes": changes,
            "withheld": len(touched) - len(readable),  # kinds the user may not read: counted only
            "may_revert": all(_may_revert(request, m._meta) for m in versions.DEFINITIONS.values()),
            "revert_url": reverse("admin:registry_changeset_revert", args=[changeset]),
            **(extra_context or {}),
        }
        return super().change_view(request, object_id, form_url, context)

    def revert_view(self, request: HttpRequest, changeset: int) -> HttpResponse:
        back = reverse("admin:registry_changeset_change", args=[changeset])
        if request.method != "POST":
            return HttpResponseRedirect(back)
        if not all(_may_revert(request, m._meta) for m in versions.DEFINITIONS.values()):
            raise PermissionDenied
        try:
            with authored(of_user(request.user, "admin")):
                reverted = versions.revert_changeset(changeset)
        except LookupError as exc:
            raise Http404(str(exc)) from None
        except versions.RevertRefused as exc:
            for conflict in exc.conflicts:
                messages.error(request, f"{conflict.kind} {conflict.key}: {conflict.reason}")
            messages.error(request, "Nothing was reverted.")
            return HttpResponseRedirect(back)
        messages.success(request, f"Change set {changeset} reverted: {len(reverted)} definition(s) restored.")
        return HttpResponseRedirect(reverse("admin:registry_changeset_changelist"))


def _pk(object_id: str) -> int:
    try:
        return int(unquote(object_id))
    except ValueError:
        raise Http404(f"No object with id {object_id!r}.") from None


def _history_url(opts: Any, object_id: str) -> str:
    return reverse(f"admin:{opts.app_label}_{opts.model_name}_history", args=[object_id])
