"""The base of admin pages that show rows and never add or change them there: the audit log,
change sets, OAuth signing keys and events, and the pages read from a store (live sessions and
tasks). Their rows are written by the server itself; a hand edit would falsify a record."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest


class ViewOnlyAdmin(admin.ModelAdmin):
    deletable = False  # True: staff with the delete permission may still remove rows

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self.deletable and super().has_delete_permission(request, obj)
