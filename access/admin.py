"""API keys and the audit log in the Django admin.

A new key's token is shown once, on the page that answers the save (``secret_page``), and never
again (only its SHA-256 is stored). Keys are revoked, not deleted, so the audit log keeps naming
them: from the list (an action) or from a key's page (its Revoke button, then a confirmation).
The list filters by status (active, expired, revoked). The audit log is read-only. The approval
queue (``approvals.py``) is read and decided (approve / deny actions) only by staff with
``access.decide_approval``: its arguments are the calls' as sent, and may hold secrets.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db import models
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import NoReverseMatch, URLPattern, path, reverse
from django.utils import timezone
from django.utils.html import format_html
from django.utils.http import urlencode

from mcp_django.view_only_admin import ViewOnlyAdmin
from mcp_django.widgets import JSONEditorWidget
from mcp_protocol.auth.keys import digest as token_digest
from mcp_protocol.auth.keys import new_token

from . import approvals
from .models import STATUSES, ApiKey, Approval, AuditRecord
from .secret_page import show_secret_once


class KeyStatusFilter(admin.SimpleListFilter):
    title = "status"
    parameter_name = "status"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [(status, status) for status in STATUSES]

    def queryset(self, request: HttpRequest, queryset: QuerySet[ApiKey]) -> QuerySet[ApiKey]:
        value = self.value()
        return queryset.with_status(value) if value in STATUSES else queryset  # type: ignore[attr-defined]


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    # The key's scopes (tools, resources, prompts, tags) are JSON lists: checked as they are typed.
    formfield_overrides = {models.JSONField: {"widget": JSONEditorWidget(attrs={"rows": 2})}}
    list_display = ("name", "shown_prefix", "owner", "status", "expires_at", "last_used_at", "created_at")
    list_filter = (KeyStatusFilter, "expires_at")
    search_fields = ("name", "prefix", "owner__username")
    readonly_fields = ("shown_prefix", "created_at", "last_used_at", "revoked_at")
    fields = ("name", "owner", "expires_at", "tools", "resources", "prompts", "tags", "rate", "tool_rate",
              "shown_prefix", "created_at", "last_used_at", "revoked_at")
    actions = ("revoke",)

    @admin.display(description="key")
    def shown_prefix(self, key: ApiKey) -> str:
        return f"mcp_{key.prefix}_…" if key.prefix else "(made when saved)"

    def save_model(self, request: HttpRequest, obj: ApiKey, form: Any, change: bool) -> None:
        if not change:
            token, obj.prefix = new_token()
            obj.digest = token_digest(token)
            super().save_model(request, obj, form, change)
            obj._token = token  # type: ignore[attr-defined]  # for response_add, this request only
            return
        super().save_model(request, obj, form, change)

    def response_add(self, request: HttpRequest, obj: ApiKey, post_url_continue: str | None = None
                     ) -> HttpResponse:
        return show_secret_once(request, self, obj, obj._token)  # type: ignore[attr-defined]

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # revoke instead: audit records keep naming the key

    def get_urls(self) -> list[URLPattern]:
        revoke = path("<path:object_id>/revoke/", self.admin_site.admin_view(self.revoke_view),
                      name="access_apikey_revoke")
        return [revoke, *super().get_urls()]

    def revoke_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        """GET: "Revoke this key?" with its name and what stops working; POST: revoke it and go
        back to its page. The change permission is what revoking takes (the list action too)."""
        try:
            key = get_object_or_404(ApiKey, pk=int(object_id))
        except ValueError:
            raise Http404("No such key") from None
        if not self.has_change_permission(request, key):
            raise PermissionDenied
        change_url = reverse("admin:access_apikey_change", args=[key.pk])
        if request.method == "POST":
            if key.status == "revoked":
                self.message_user(request, f"{key} was already revoked.", messages.WARNING)
            else:
                key.revoke()
                self.message_user(request, f"{key} is revoked: /mcp refuses it from now on.")
            return HttpResponseRedirect(change_url)
        context = {**self.admin_site.each_context(request), "opts": self.opts, "object": key,
                   "title": f"Revoke {key}?", "change_url": change_url}
        return TemplateResponse(request, "admin/access/apikey/revoke_confirmation.html", context)

    @admin.action(description="Revoke the selected keys")
    def revoke(self, request: HttpRequest, queryset: QuerySet[ApiKey]) -> None:
        for key in queryset:
            key.revoke()
        self.message_user(request, f"{queryset.count()} key(s) revoked.")


# What an audited call names, by method: the registry's changelist filtered to it (a link by URL
# name: ``access`` does not import ``registry``). A definition written in code shows there too.
DEFINITION_LISTS = {
    "tools/call": ("admin:registry_tool_changelist", "name"),
    "prompts/get": ("admin:registry_prompt_changelist", "name"),
    "resources/read": ("admin:registry_resource_changelist", "uri"),
}


@admin.register(AuditRecord)
class AuditRecordAdmin(ViewOnlyAdmin):
    list_display = ("when", "who", "server_called", "method", "what", "outcome", "duration_ms", "session")
    list_filter = ("outcome", "method", "server", "revision")
    search_fields = ("principal", "principal_id", "name", "session")
    date_hierarchy = "time"


    @admin.display(description="time", ordering="time")
    def when(self, record: AuditRecord) -> str:
        return timezone.localtime(record.time).strftime("%Y-%m-%d %H:%M:%S")

    @admin.display(description="server", ordering="server")
    def server_called(self, record: AuditRecord) -> str:
        return f"/mcp/{record.server}" if record.server else "/mcp"

    @admin.display(description="principal", ordering="principal")
    def who(self, record: AuditRecord) -> str:
        kind, _, key_id = record.principal_id.partition(":")
        if kind != "key" or not key_id.isdigit():
            return record.principal
        return format_html('<a href="{}">{}</a>', reverse("admin:access_apikey_change", args=[key_id]),
                           record.principal)

    @admin.display(description="name", ordering="name")
    def what(self, record: AuditRecord) -> str:
        if record.method not in DEFINITION_LISTS:
            return record.name
        url_name, field = DEFINITION_LISTS[record.method]
        try:
            url = reverse(url_name)
        except NoReverseMatch:  # the registry's admin is not installed
            return record.name
        return format_html('<a href="{}?{}">{}</a>', url, urlencode({field: record.name}), record.name)



class ApprovalStateFilter(admin.SimpleListFilter):
    title = "state"
    parameter_name = "state"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("pending", "Pending"), ("decided", "Decided or expired")]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Approval]) -> QuerySet[Approval]:
        waiting = {"decision": "", "expires_at__gt": timezone.now()}
        if self.value() == "pending":
            return queryset.filter(**waiting)
        if self.value() == "decided":
            return queryset.exclude(**waiting)
        return queryset


@admin.register(Approval)
class ApprovalAdmin(admin.ModelAdmin):
    list_display = ("created", "tool", "principal", "server", "decision_shown", "decided_by", "decided_at")
    list_filter = (ApprovalStateFilter, "decision", "tool")
    search_fields = ("tool", "principal", "principal_id", "session")
    readonly_fields = ("tool", "arguments", "arguments_digest", "principal", "principal_id", "session",
                       "server", "created", "expires_at", "decision", "decided_by", "decided_at")
    actions = ("approve", "deny")

    # Read and decided by the same people: the arguments may hold secrets.
    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self.has_decide_permission(request)

    def has_module_permission(self, request: HttpRequest) -> bool:
        return self.has_decide_permission(request)

    def has_decide_permission(self, request: HttpRequest) -> bool:
        return bool(request.user.is_active and request.user.is_staff
                    and request.user.has_perm("access.decide_approval"))

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @admin.display(description="decision", ordering="decision")
    def decision_shown(self, row: Approval) -> str:
        if row.decision:
            return row.get_decision_display()
        return "Pending" if row.pending else "Expired"

    @admin.action(description="Approve the selected calls (they run)", permissions=["decide"])
    def approve(self, request: HttpRequest, queryset: QuerySet[Approval]) -> None:
        self._decide(request, queryset, approve=True)

    @admin.action(description="Deny the selected calls (they end with an error)", permissions=["decide"])
    def deny(self, request: HttpRequest, queryset: QuerySet[Approval]) -> None:
        self._decide(request, queryset, approve=False)

    def _decide(self, request: HttpRequest, queryset: QuerySet[Approval], *, approve: bool) -> None:
        done, skipped = 0, 0
        for pk in queryset.values_list("pk", flat=True):
            try:
                approvals.decide(pk, approve, request.user)
                done += 1
            except approvals.NotPending:
                skipped += 1
        verb = "Approved" if approve else "Denied"
        self.message_user(request, f"{verb} {done} call(s).", messages.SUCCESS)
        if skipped:
            self.message_user(request, f"{skipped} were already decided or expired: left as they were.",
                              messages.WARNING)
