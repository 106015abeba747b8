"""Providers (with their history), and the connected accounts: who is connected where and until
when, never the tokens (``sealed`` is not a field of any form or list); staff revoke with the
action, which also calls the provider's revocation URL."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import Http404, HttpRequest
from simple_history.admin import SimpleHistoryAdmin

from . import vault
from .models import ConnectedToken, Provider


@admin.register(Provider)
class ProviderAdmin(SimpleHistoryAdmin):
    list_display = ("slug", "name", "kind", "enabled", "token_url", "updated_at")
    search_fields = ("slug", "name")
    list_filter = ("kind", "enabled")
    fields = ("slug", "name", "kind", "enabled", "authorization_url", "token_url", "revocation_url",
              "resource", "scopes", "client_id", "client_secret_env")

    def history_view(self, request: HttpRequest, object_id: str, extra_context: Any = None) -> Any:
        # simple-history looks the id up as given: a non-numeric one would be a 500, not a 404.
        if not str(object_id).isdigit():
            raise Http404(f"No provider {object_id!r}.")
        return super().history_view(request, object_id, extra_context)


@admin.register(ConnectedToken)
class ConnectedTokenAdmin(admin.ModelAdmin):
    list_display = ("user", "provider", "scope", "created_at", "refreshed_at", "expires_at")
    list_filter = ("provider",)
    search_fields = ("user__username", "provider__slug")
    fields = ("user", "provider", "scope", "created_at", "refreshed_at", "expires_at", "refreshable")
    readonly_fields = fields
    actions = ["revoke"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # only the connect flow makes one

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def get_actions(self, request: HttpRequest) -> dict[str, Any]:
        found: dict[str, Any] = super().get_actions(request)
        found.pop("delete_selected", None)  # a plain delete would skip the provider's revocation
        return found

    @admin.action(description="Revoke the selected connected accounts", permissions=["delete"])
    def revoke(self, request: HttpRequest, queryset: QuerySet[ConnectedToken]) -> None:
        rows = list(queryset.select_related("provider"))
        for row in rows:
            vault.revoke(row)
        self.message_user(request, f"Revoked {len(rows)} connected account(s).", messages.SUCCESS)

    def delete_model(self, request: HttpRequest, obj: ConnectedToken) -> None:
        vault.revoke(obj)
