"""The admin of the built-in authorization server: its signing keys (ids and dates, never the key)
and its audit rows, both read-only. Clients (pre-registered ones too), grants and tokens are the
toolkit's own admin pages (``oauth2_provider``), which staff use to see every user's grants."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from mcp_django.view_only_admin import ViewOnlyAdmin

from .models import OAuthEvent, SigningKey


class ReadOnly(ViewOnlyAdmin):
    deletable = True


@admin.register(SigningKey)
class SigningKeyAdmin(ReadOnly):
    list_display = ("kid", "algorithm", "created_at", "retired_at")
    fields = ("kid", "algorithm", "created_at", "retired_at")  # never private_key
    readonly_fields = fields


@admin.register(OAuthEvent)
class OAuthEventAdmin(ReadOnly):
    list_display = ("at", "kind", "user", "client_id", "detail")
    list_filter = ("kind",)
    search_fields = ("client_id", "user__username")

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
