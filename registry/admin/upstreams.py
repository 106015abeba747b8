"""The admin of upstream MCP servers (issue 40 item 5).

The list shows each upstream's name, prefix, URL, health (a colored badge), last sync and how many
definitions it mirrors (and how many of them are missing), counted in the list's one query. The
change page edits it in four parts (connection, authentication, limits, sync), shows its health
read-only, and has three buttons:

- **Test connection** (``<id>/test/``, POST): connect and initialize only; the upstream's
  serverInfo, protocol version, capabilities and latency, or the error.
- **Sync now** (``<id>/sync/``, POST): the sync's report (added, updated, missing, restored,
  refused with reasons, error); in review mode the report is the diff stored for approval.
- **Review** (``<id>/review/``): the pending diff with **Approve** (applies it, unless stale) and
  **Discard**.

Reading needs ``view_upstream``; the three actions need ``change_upstream`` (POST only, with the
admin's CSRF check). Writes from these pages are authored by the signed-in user from the admin
(``changes/authorship.py``), so a sync's or an approval's change set names who asked for it.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.db.models import Count, IntegerField, OuterRef, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseNotAllowed, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils.html import format_html

from .. import upstream_actions
from ..changes.authorship import authored, of_user
from ..models import Upstream
from .base import JSON_WIDGETS
from .forms import VersionedForm

BADGE_COLORS = {"up": "#2e7d32", "degraded": "#ef6c00", "down": "#c62828", "unknown": "#757575"}


def _count(model: Any, **filters: Any) -> Coalesce:
    rows = (model._default_manager.filter(upstream=OuterRef("pk"), **filters).order_by()
            .values("upstream").annotate(n=Count("pk")).values("n"))
    return Coalesce(Subquery(rows, output_field=IntegerField()), Value(0))


def with_counts(queryset: QuerySet[Upstream]) -> QuerySet[Upstream]:
    """``mirrored_total`` and ``mirrored_missing`` on each row, in the listing's own query."""
    models = [model for _, model in upstream_actions.MIRRORED_KINDS]
    total = sum((_count(m) for m in models[1:]), _count(models[0]))
    missing = sum((_count(m, upstream_missing=True) for m in models[1:]),
                  _count(models[0], upstream_missing=True))
    return queryset.annotate(mirrored_total=total, mirrored_missing=missing)


def health_badge(row: Upstream) -> str:
    return format_html(
        '<span class="upstream-health upstream-health-{}" style="background:{};color:#fff;padding:1px 6px;'
        'border-radius:3px">{}</span>', row.health, BADGE_COLORS.get(row.health, "#757575"),
        row.get_health_display())


class UpstreamForm(VersionedForm):
    class Meta:
        model = Upstream
        fields = "__all__"
        labels = {"auth": "Authentication", "auth_secret_env": "Secret's environment variable"}


@admin.register(Upstream)
class UpstreamAdmin(admin.ModelAdmin):
    form = UpstreamForm
    formfield_overrides = JSON_WIDGETS
    list_display = ("name", "prefix", "url", "health_state", "last_sync_at", "mirrored", "missing")
    list_filter = ("enabled", "health")
    search_fields = ("name", "prefix", "url")
    readonly_fields = ("health_state", "health_detail", "last_sync_at", "last_sync_ok_at", "latency_ms",
                       "server_info", "mirrored_now", "created_at", "updated_at")
    fieldsets = (
        ("Connection", {"fields": ("name", "prefix", "url", "transport", "enabled", "opened_version")}),
        ("Authentication", {
            "description": "Secrets are never stored: name the environment variable that holds the "
            "header's value or the client secret (allowed as the http tools' secrets are). As the "
            "user: each caller's own token at the connection provider; the sync lists the upstream "
            "with the listing authentication (the header and OAuth fields describe it).",
            "fields": ("auth", "connection", "sync_auth", "auth_header", "auth_secret_env", "oauth_token_url",
                       "oauth_client_id", "oauth_scopes")}),
        ("Limits", {"fields": ("timeout", "connect_timeout", "max_concurrency")}),
        ("Sync", {"fields": ("sync_interval", "review_syncs")}),
        ("Health", {"fields": ("health_state", "health_detail", "last_sync_at", "last_sync_ok_at",
                               "latency_ms", "server_info", "mirrored_now", "created_at", "updated_at")}),
    )
    change_form_template = "admin/registry/upstream/change_form.html"
    actions = ("sync_selected",)

    @admin.action(description="Sync the selected upstreams now", permissions=["change"])
    def sync_selected(self, request: HttpRequest, queryset: QuerySet[Upstream]) -> None:
        """One sync each, as the signed-in user; a line per upstream (its report is on its page)."""
        for row in queryset:
            report = upstream_actions.sync_now(row, of_user(request.user, "admin"))
            if report["error"]:
                # The report's error names the upstream already ("vendor: ConnectError: …").
                self.message_user(request, f"Not synced: {report['error']}", messages.ERROR)
                continue
            verb = "pending review" if report["pending"] else "synced"
            self.message_user(request, f"{row.name}: {verb} ({len(report['added'])} added, "
                              f"{len(report['updated'])} updated, {len(report['missing'])} missing, "
                              f"{len(report['refused'])} refused; health {report['health']}).")

    def get_queryset(self, request: HttpRequest) -> QuerySet[Upstream]:
        return with_counts(super().get_queryset(request))

    @admin.display(description="Health", ordering="health")
    def health_state(self, row: Upstream) -> str:
        return health_badge(row)

    @admin.display(description="Mirrored", ordering="mirrored_total")
    def mirrored(self, row: Upstream) -> int:
        return getattr(row, "mirrored_total", 0)

    @admin.display(description="Missing", ordering="mirrored_missing")
    def missing(self, row: Upstream) -> int:
        return getattr(row, "mirrored_missing", 0)

    @admin.display(description="Mirrored now")
    def mirrored_now(self, row: Upstream) -> str:
        if row.pk is None:
            return "Nothing yet: save, then sync."
        counts = upstream_actions.mirrored_counts(row)
        kinds = ", ".join(f"{counts[key]} {key.replace('_', ' ')}"
                          for key, _ in upstream_actions.MIRRORED_KINDS)
        return f"{kinds} ({counts['missing']} missing)"

    # -- writes authored by the signed-in user (its change sets name them) -----------------------
    def changeform_view(self, request: HttpRequest, object_id: str | None = None, form_url: str = "",
                        extra_context: dict[str, Any] | None = None) -> Any:
        context = dict(extra_context or {})
        if object_id is not None:
            row = self.get_object(request, unquote(object_id))
            if row is not None:
                context.update(self._buttons(request, row))
        with authored(of_user(request.user, "admin")):
            return super().changeform_view(request, object_id, form_url, context)

    def delete_view(self, request: HttpRequest, object_id: str,
                    extra_context: dict[str, Any] | None = None) -> Any:
        with authored(of_user(request.user, "admin")):
            return super().delete_view(request, object_id, extra_context)

    def changelist_view(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> Any:
        with authored(of_user(request.user, "admin")):
            return super().changelist_view(request, extra_context)

    def get_deleted_objects(self, objs: Any, request: HttpRequest) -> Any:
        """An upstream's mirrored rows go with it (``Upstream.delete``): listed as deleted, not as
        protected."""
        deleted, counts, perms, _protected = super().get_deleted_objects(objs, request)
        # The only PROTECT on an upstream is its mirrored rows' key: each is deleted with it, and
        # needs the delete permission of its kind, as a cascade in the admin does.
        rows = [row for upstream in objs for row in upstream.mirrored_rows()]
        for row in rows:
            meta = row._meta
            counts[meta.verbose_name_plural] = counts.get(meta.verbose_name_plural, 0) + 1
            if not request.user.has_perm(f"{meta.app_label}.delete_{meta.model_name}"):
                perms.add(meta.verbose_name)
        return [*deleted, *(f"{row._meta.verbose_name}: {row}" for row in rows)], counts, perms, []

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Upstream]) -> None:
        for row in queryset:
            row.delete()  # with its mirrored rows (the queryset's delete would meet PROTECT)

    def _buttons(self, request: HttpRequest, row: Upstream) -> dict[str, Any]:
        may_change = self.has_change_permission(request, row)
        return {
            "may_act": may_change,
            "test_url": reverse("admin:registry_upstream_test", args=[row.pk]),
            "sync_url": reverse("admin:registry_upstream_sync", args=[row.pk]),
            "review_url": reverse("admin:registry_upstream_review", args=[row.pk]),
            "pending": upstream_actions.pending_report(row) is not None,
        }

    # -- the actions ---------------------------------------------------------------------------
    def get_urls(self) -> list[URLPattern]:
        def route(suffix: str, view: Any) -> URLPattern:
            return path(f"<path:object_id>/{suffix}/", self.admin_site.admin_view(view),
                        name=f"registry_upstream_{suffix}")

        return [route("test", self.test_view), route("sync", self.sync_view),
                route("review", self.review_view), *super().get_urls()]

    def _row(self, request: HttpRequest, object_id: str, change: bool) -> Upstream:
        row = self.get_object(request, unquote(object_id))
        if row is None:
            raise Http404(f"No upstream with id {object_id!r}.")
        may = self.has_change_permission if change else self.has_view_permission
        if not may(request, row):
            raise PermissionDenied
        return row

    def _page(self, request: HttpRequest, row: Upstream, title: str, **context: Any) -> TemplateResponse:
        return TemplateResponse(request, "admin/registry/upstream/report.html", {
            **self.admin_site.each_context(request), "opts": self.opts, "original": row, "title": title,
            "may_act": self.has_change_permission(request, row), **context})

    def test_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        row = self._row(request, object_id, change=True)
        return self._page(request, row, f"Connection test of {row.name}",
                          probe=upstream_actions.test_connection(row))

    def sync_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        row = self._row(request, object_id, change=True)
        report = upstream_actions.sync_now(row, of_user(request.user, "admin"))
        return self._page(request, row, f"Sync of {row.name}", report=report)

    def review_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        row = self._row(request, object_id, change=request.method == "POST")
        if request.method == "POST":
            if request.POST.get("decision") == "approve":
                try:
                    report = upstream_actions.approve(row, of_user(request.user, "admin"))
                except upstream_actions.NotApproved as exc:
                    messages.error(request, str(exc))
                    return HttpResponseRedirect(reverse("admin:registry_upstream_review", args=[row.pk]))
                return self._page(request, row, f"Approved sync of {row.name}", report=report)
            if request.POST.get("decision") == "discard":
                upstream_actions.discard(row)
                messages.success(request, f"The pending sync of {row.name} was discarded.")
                return HttpResponseRedirect(reverse("admin:registry_upstream_change", args=[row.pk]))
            return HttpResponse("decision is approve or discard", status=400, content_type="text/plain")
        return self._page(request, row, f"Pending sync of {row.name}",
                          pending=upstream_actions.pending_report(row), review=True)
