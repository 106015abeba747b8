"""Management API tokens in the Django admin. Adding one shows the token once, on the page that
answers the save (``access.secret_page``); only its digest is stored. Deleting one revokes it.

A token acts as its user, so a staff user may add tokens only for themselves: the add form offers
only them, and a forged POST naming another user is refused. Superusers may add one for anyone.
Likewise a staff user sees (and so may delete) only their own tokens: another user's token names,
hints and last use are none of their business, and revoking them would cut off that user's clients.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse

from access.secret_page import show_secret_once

from .tokens import ManagementToken


@admin.register(ManagementToken)
class ManagementTokenAdmin(admin.ModelAdmin):
    list_display = ("name", "user", "hint", "created_at", "expires_at", "last_used_at")
    list_filter = ("user",)
    fields = ("user", "name", "expires_at", "hint", "created_at", "last_used_at")
    readonly_fields = ("hint", "created_at", "last_used_at")

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False if obj is not None else super().has_change_permission(request, obj)

    def get_queryset(self, request: HttpRequest) -> Any:
        rows = super().get_queryset(request)
        return rows if request.user.is_superuser else rows.filter(user=request.user.pk)

    def get_list_filter(self, request: HttpRequest) -> Any:
        return self.list_filter if request.user.is_superuser else ()

    def formfield_for_foreignkey(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        if db_field.name == "user" and not request.user.is_superuser:
            # The choices are also what the form accepts: another user's id is "not a valid choice".
            kwargs["queryset"] = get_user_model()._default_manager.filter(pk=request.user.pk)
            kwargs["initial"] = request.user.pk
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def save_model(self, request: HttpRequest, obj: ManagementToken, form: Any, change: bool) -> None:
        if obj.user_id != request.user.pk and not request.user.is_superuser:
            raise PermissionDenied("A staff user may add management API tokens only for themselves.")
        row, token = ManagementToken.issue(obj.user, obj.name, obj.expires_at)
        obj.pk, obj.digest, obj.hint = row.pk, row.digest, row.hint
        obj._state.adding = False
        obj._token = token  # type: ignore[attr-defined]  # for response_add, this request only

    def response_add(self, request: HttpRequest, obj: ManagementToken, post_url_continue: str | None = None
                     ) -> HttpResponse:
        return show_secret_once(request, self, obj, obj._token)  # type: ignore[attr-defined]


from . import session_admin, task_admin  # noqa: E402, F401  (register the sessions and tasks pages)
