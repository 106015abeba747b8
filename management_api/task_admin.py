"""The admin's "MCP tasks" page: every principal's tasks, read from the task store, each with a
Cancel button (``tasks.cancel``: as ``tasks/cancel`` does, the run stopped wherever it runs).

``LiveTask`` has no table, so the page is the model admin's changelist view, rendered from the
store; its permissions are the model's (``view_livetask``, ``cancel_livetask``).
"""

from __future__ import annotations

from typing import Any

from asgiref.sync import async_to_sync
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse

from mcp_protocol.store_errors import StoreUnavailable
from mcp_protocol.stores.tasks import ANY_PRINCIPAL

from . import tasks
from .models import LiveTask
from .store_admin import StoreListAdmin

PAGE = 100


@admin.register(LiveTask)
class LiveTaskAdmin(StoreListAdmin):
    act_permission = "cancel_livetask"  # "Cancel"

    def changelist_view(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        if not self.has_view_permission(request):
            raise PermissionDenied
        can_cancel = self.may_act(request)
        if request.method == "POST":
            if not can_cancel:
                raise PermissionDenied
            try:
                found = tasks.cancel(str(request.POST.get("key", "")))
            except StoreUnavailable:
                found = None
                messages.error(request, "The task store is unreachable; retry shortly.")
            else:
                if found is None:
                    messages.error(request, "No task has this key.")
                elif found.terminal:
                    messages.info(request, f"The task was already {found.status}.")
                else:
                    messages.success(request, "The task is cancelled.")
            return HttpResponseRedirect(request.path)
        raw = request.GET.get("offset", "0")
        offset = int(raw) if raw.isascii() and raw.isdigit() else 0
        try:
            page, following = async_to_sync(tasks.store().list_tasks)(ANY_PRINCIPAL, offset, PAGE)
        except StoreUnavailable:
            page, following = [], None
            messages.error(request, "The task store is unreachable; retry shortly.")
        context = {
            **self.admin_site.each_context(request),
            "title": "MCP tasks",
            "opts": self.model._meta,
            "rows": [tasks.TaskSerializer.row(task) for task in page],
            "can_cancel": can_cancel,
            "next_offset": following,
            **(extra_context or {}),
        }
        return TemplateResponse(request, "admin/management_api/livetask/change_list.html", context)
