"""``/api/v1/tasks/``: MCP tasks (the extension io.modelcontextprotocol/tasks, 2025-11-25 tasks)
of every principal, read from the task store (memory, or Redis: every worker's), and
``POST /api/v1/tasks/<key>/cancel/`` to cancel one as ``tasks/cancel`` does: the task is
``cancelled`` at once and its run stopped on the worker holding its lease (through the bus).

A task id is a bearer handle of its client (SEP-2663 "Security Implications"), so the API never
shows one whole: a row shows its first characters and is addressed by its ``key``, a SHA-256
digest of the id. Pages are newest first.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from typing import Any

from asgiref.sync import async_to_sync
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import exceptions, permissions, serializers, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from mcp_django.conf import mcp_settings
from mcp_protocol.store_errors import StoreUnavailable
from mcp_protocol.stores.tasks import ANY_PRINCIPAL, STATUSES, TaskRecord, TaskStore
from mcp_protocol.tasks.signals import cancel_everywhere

PAGE_SIZE, MAX_PAGE_SIZE = 100, 500
RESOLVE_LIMIT = 100_000  # tasks looked through to find a key (the store lists, it is not indexed by key)


def key_of(task_id: str) -> str:
    return hashlib.sha256(task_id.encode()).hexdigest()[:32]


class TaskPermissions(permissions.BasePermission):
    def has_permission(self, request: Request, view: Any) -> bool:
        needed = "cancel" if request.method == "POST" else "view"
        return bool(request.user.has_perm(f"management_api.{needed}_livetask"))


def _moment(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, UTC)


class TaskSerializer(serializers.Serializer):
    key = serializers.CharField(help_text="Addresses the task in this API (not its id).")
    id = serializers.CharField(help_text="The first characters of the task id.")
    principal = serializers.CharField(allow_null=True)
    tool = serializers.CharField()
    status = serializers.ChoiceField(choices=STATUSES)
    status_message = serializers.CharField(allow_null=True)
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()
    seconds = serializers.FloatField(help_text="From creation to the last update.")
    error = serializers.DictField(allow_null=True, help_text="The JSON-RPC error of a failed task.")
    running_on = serializers.CharField(allow_null=True, help_text="The worker holding its lease.")

    @staticmethod
    def row(task: TaskRecord) -> dict[str, Any]:
        return {
            "key": key_of(task.task_id),
            "id": task.task_id[:6] + "…",
            "principal": task.principal,
            "tool": task.tool,
            "status": task.status,
            "status_message": task.status_message,
            "created_at": _moment(task.created_ms),
            "updated_at": _moment(task.updated_ms),
            "seconds": (task.updated_ms - task.created_ms) / 1000,
            "error": task.error,
            "running_on": task.owner,
        }


def _unavailable() -> exceptions.APIException:
    error = exceptions.APIException("The task store is unreachable; retry shortly.")
    error.status_code = 503
    return error


def store() -> TaskStore:
    backend: TaskStore = mcp_settings.backend("TASK_STORE")
    return backend


def resolve(key: str) -> str | None:
    """The id of the task with this key (operators only: a walk of the listing)."""
    offset: int | None = 0
    while offset is not None and offset < RESOLVE_LIMIT:
        page, offset = async_to_sync(store().list_tasks)(ANY_PRINCIPAL, offset, 500)
        for task in page:
            if key_of(task.task_id) == key:
                return task.task_id
    return None


def cancel(key: str) -> TaskRecord | None:
    """Cancel the task with this key everywhere; the record as found (None: no such task)."""
    task_id = resolve(key)
    if task_id is None:
        return None
    return async_to_sync(cancel_everywhere)(store(), mcp_settings.backend("BUS"), task_id, ANY_PRINCIPAL)


class TaskViewSet(viewsets.ViewSet):
    permission_classes = [permissions.IsAdminUser, TaskPermissions]
    lookup_field = "key"
    lookup_value_regex = "[0-9a-f]{32}"

    @extend_schema(
        summary="MCP tasks of every principal, newest first",
        description="The MCP tasks (long tool calls run as tasks) of every client, newest first, from "
        "the task store: status, tool, timing and the worker running it. A task id is its client's "
        "handle: a row shows its first characters and is addressed by `key`. `next` is the next "
        "page's link (no `count`: the store keeps no total).",
        parameters=[
            OpenApiParameter("offset", int, description="Where the page starts (the `next` link's)."),
            OpenApiParameter("page_size", int, description=f"Up to {MAX_PAGE_SIZE} (default {PAGE_SIZE})."),
        ],
        responses={200: inline_serializer("TaskPage", {
            "next": serializers.URLField(allow_null=True), "results": TaskSerializer(many=True)}),
            400: OpenApiTypes.OBJECT, 401: OpenApiTypes.OBJECT, 403: OpenApiTypes.OBJECT,
            503: OpenApiTypes.OBJECT},
    )
    def list(self, request: Request) -> Response:
        size = self._number(request, "page_size", PAGE_SIZE, 1, MAX_PAGE_SIZE)
        offset = self._number(request, "offset", 0, 0, RESOLVE_LIMIT)
        try:
            page, following = async_to_sync(store().list_tasks)(ANY_PRINCIPAL, offset, size)
        except StoreUnavailable:
            raise _unavailable() from None
        next_url = None
        if following is not None:
            next_url = request.build_absolute_uri(f"{request.path}?page_size={size}&offset={following}")
        rows = [TaskSerializer.row(task) for task in page]
        return Response({"next": next_url, "results": TaskSerializer(rows, many=True).data})

    @extend_schema(summary="Cancel a task, as tasks/cancel does, wherever it runs", request=None,
                   description="Cancel a task by its `key`: it is `cancelled` at once and its run is "
                   "stopped on the worker holding its lease. The answer is the task as it is now.",
                   responses={200: TaskSerializer, 401: OpenApiTypes.OBJECT, 403: OpenApiTypes.OBJECT,
                              404: OpenApiTypes.OBJECT, 503: OpenApiTypes.OBJECT})
    @action(detail=True, methods=["post"])
    def cancel(self, request: Request, key: str) -> Response:
        try:
            found = cancel(key)
            if found is None:
                raise exceptions.NotFound("No task has this key.")
            now = async_to_sync(store().get)(found.task_id, ANY_PRINCIPAL) or found
        except StoreUnavailable:
            raise _unavailable() from None
        return Response(TaskSerializer(TaskSerializer.row(now)).data)

    @staticmethod
    def _number(request: Request, name: str, default: int, low: int, high: int) -> int:
        raw = request.query_params.get(name, str(default))
        if not (raw.isascii() and raw.isdigit()) or not low <= int(raw) <= high:
            raise exceptions.ValidationError({name: [f"A whole number from {low} to {high}."]})
        return int(raw)
