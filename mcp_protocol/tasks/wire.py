"""A ``TaskRecord`` on the wire, per revision, and who may use tasks.

2026-07-28 (SEP-2663 "Tasks"): ``ttlMs``/``pollIntervalMs``; ``tasks/get`` and
``notifications/tasks`` carry the ``DetailedTask`` (``inputRequests`` while ``input_required``,
``result`` once ``completed``, ``error`` once ``failed``); a ``CreateTaskResult`` is the flat
``Result & Task`` with ``resultType: "task"`` and never a result, error, inputRequests or
requestState. 2025-11-25 (tasks.mdx): ``ttl``/``pollInterval``, the task alone (its result comes
from ``tasks/result``), wrapped as ``{"task": …}`` in a ``CreateTaskResult``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from ..errors import MissingClientCapability
from ..stores.tasks import COMPLETED, FAILED, INPUT_REQUIRED, TaskRecord

EXTENSION = "io.modelcontextprotocol/tasks"
# 2025-11-25 tasks.mdx "Server Capabilities": list, cancel and task-augmented tools/call.
LEGACY_CAPABILITY: dict[str, Any] = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
RELATED_TASK = "io.modelcontextprotocol/related-task"


def declares_extension(capabilities: dict[str, Any]) -> bool:
    """The client's (per-request, in 2026-07-28) capabilities include the tasks extension."""
    extensions = capabilities.get("extensions")
    return isinstance(extensions, dict) and isinstance(extensions.get(EXTENSION), dict)


def missing_extension(what: str) -> MissingClientCapability:
    """-32021 naming the extension (SEP-2663 "Capability Negotiation": data.requiredCapabilities)."""
    return MissingClientCapability(
        f"Missing required client capability: {what} needs the {EXTENSION} extension",
        {"requiredCapabilities": {"extensions": {EXTENSION: {}}}},
    )


def iso(ms: int) -> str:
    """ISO 8601 in UTC with milliseconds, e.g. ``2026-11-26T19:30:00.125Z``."""
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def task_to_wire(record: TaskRecord, *, modern: bool, detailed: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {
        "taskId": record.task_id,
        "status": record.status,
        "createdAt": iso(record.created_ms),
        "lastUpdatedAt": iso(record.updated_ms),
    }
    if record.status_message:
        out["statusMessage"] = record.status_message
    if modern:
        out["ttlMs"] = record.ttl_ms
        out["pollIntervalMs"] = record.poll_interval_ms
    else:
        out["ttl"] = record.ttl_ms
        out["pollInterval"] = record.poll_interval_ms
    if detailed and modern:
        if record.status == INPUT_REQUIRED:
            out["inputRequests"] = record.input_requests
        elif record.status == COMPLETED and record.result is not None:
            out["result"] = record.result
        elif record.status == FAILED and record.error is not None:
            out["error"] = record.error
    return out


def created_to_wire(record: TaskRecord, *, modern: bool) -> dict[str, Any]:
    """The ``CreateTaskResult`` of a new task."""
    if modern:
        return {"resultType": "task", **task_to_wire(record, modern=True)}
    return {"task": task_to_wire(record, modern=False)}
