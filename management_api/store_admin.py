"""The base of the admin pages whose rows live in a store, not a table (``LiveSession``,
``LiveTask``): a changelist rendered from the store, no add, change, delete or history route (they
would query a table that does not exist: a 500, found by tests/security/test_route_walk.py), and
permissions that
are the model's own: ``view_<model>`` to see the page, ``act_permission`` (``delete_livesession``,
``cancel_livetask``) for the page's one action on a row.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from django.urls import URLPattern, path

from mcp_django.view_only_admin import ViewOnlyAdmin


class StoreListAdmin(ViewOnlyAdmin):
    act_permission = ""  # the codename of the page's action on a row

    def get_urls(self) -> list[URLPattern]:
        # The list only: a store's rows have no page of their own.
        info = self.opts.app_label, self.opts.model_name
        view = self.admin_site.admin_view(self.changelist_view)
        return [path("", view, name="{}_{}_changelist".format(*info))]

    def _perm(self, request: HttpRequest, codename: str) -> bool:
        return bool(request.user.has_perm(f"{self.opts.app_label}.{codename}"))

    def may_act(self, request: HttpRequest) -> bool:
        return self._perm(request, self.act_permission)

    def has_module_permission(self, request: HttpRequest) -> bool:
        return self._perm(request, f"view_{self.opts.model_name}")

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self.has_module_permission(request)
