"""Management API tokens in the Django admin. Adding one shows the token once; only its digest is
stored. Deleting one revokes it."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.http import HttpRequest

from .tokens import ManagementToken


@admin.register(ManagementToken)
class ManagementTokenAdmin(admin.ModelAdmin):
    """Tokens of the REST management API. Adding one shows the token once, in a message; only its
    digest is stored. Deleting one revokes it."""

    list_display = ("name", "user", "hint", "created_at", "expires_at", "last_used_at")
    list_filter = ("user",)
    fields = ("user", "name", "expires_at", "hint", "created_at", "last_used_at")
    readonly_fields = ("hint", "created_at", "last_used_at")

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False if obj is not None else super().has_change_permission(request, obj)

    def save_model(self, request: HttpRequest, obj: ManagementToken, form: Any, change: bool) -> None:
        row, token = ManagementToken.issue(obj.user, obj.name, obj.expires_at)
        obj.pk, obj.digest, obj.hint = row.pk, row.digest, row.hint
        obj._state.adding = False
        self.message_user(
            request, f"The token (shown only now, copy it): {token}", messages.WARNING)
