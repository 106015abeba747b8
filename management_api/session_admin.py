"""The admin's "Live MCP sessions" page: the sessions in the session store (every worker's, with
Redis), newest first, each with "End session" (``sessions.end``: what the management API's
``DELETE /api/v1/sessions/<key>/`` does, and an MCP ``DELETE /mcp``: on every worker).

``LiveSession`` has no table, so the page is the model admin's changelist view, rendered from the
store; its permissions are the model's: ``view_livesession`` to see the page,
``delete_livesession`` to end a session. As in the API, a session id (its client's credential) is
shown by its first characters only and addressed by its key.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse

from mcp_django.service import get_service
from mcp_protocol.store_errors import StoreUnavailable
from mcp_protocol.transports.host import RuntimeHost

from . import sessions
from .models import LiveSession
from .store_admin import StoreListAdmin

PAGE = 100
UNREACHABLE = "The session store is unreachable; retry shortly."


@admin.register(LiveSession)
class LiveSessionAdmin(StoreListAdmin):
    act_permission = "delete_livesession"  # "End session"

    def service(self) -> RuntimeHost:
        return get_service()  # this process's, as the URLconf hands the API

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self.may_act(request)  # ending a session deletes it from the store

    def changelist_view(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        if not self.has_view_permission(request):
            raise PermissionDenied
        can_end = self.has_delete_permission(request)
        if request.method == "POST":
            if not can_end:
                raise PermissionDenied
            try:
                ended = sessions.end(self.service(), str(request.POST.get("key", "")))
            except StoreUnavailable:
                messages.error(request, UNREACHABLE)
            else:
                if ended:
                    messages.success(request, "The session is ended: its client must initialize again.")
                else:
                    messages.error(request, "No live session has this key (it may have ended already).")
            return HttpResponseRedirect(request.path)
        try:
            page, streaming = sessions.page_of(self.service(), PAGE)
        except StoreUnavailable:
            page, streaming = [], set()
            messages.error(request, UNREACHABLE)
        context = {
            **self.admin_site.each_context(request),
            "title": "Live MCP sessions",
            "opts": self.model._meta,
            "rows": [sessions.SessionSerializer.row(s, s.id in streaming) for s in page],
            "more": len(page) == PAGE,
            "can_end": can_end,
            **(extra_context or {}),
        }
        return TemplateResponse(request, "admin/management_api/livesession/change_list.html", context)
