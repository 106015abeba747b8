"""API keys and the audit log in the Django admin.

A new key's token is shown once, on the page that answers the save (``secret_page``), and never
again (only its SHA-256 is stored). Keys are revoked, not deleted, so the audit log keeps naming
them; the audit log is read-only.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.urls import NoReverseMatch, reverse
from django.utils import timezone
from django.utils.html import format_html
from django.utils.http import urlencode

from mcp_protocol.auth.keys import digest as token_digest
from mcp_protocol.auth.keys import new_token

from .models import ApiKey, AuditRecord
from .secret_page import show_secret_once


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    list_display = ("name", "shown_prefix", "owner", "status", "expires_at", "last_used_at", "created_at")
    list_filter = ("revoked_at", "expires_at")
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
class AuditRecordAdmin(admin.ModelAdmin):
    list_display = ("when", "who", "method", "what", "outcome", "duration_ms", "session")
    list_filter = ("outcome", "method", "revision")
    search_fields = ("principal", "principal_id", "name", "session")
    date_hierarchy = "time"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @admin.display(description="time", ordering="time")
    def when(self, record: AuditRecord) -> str:
        return timezone.localtime(record.time).strftime("%Y-%m-%d %H:%M:%S")

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

