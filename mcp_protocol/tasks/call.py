"""The call a task runs: written into its ``TaskRecord`` once, so that any worker can run it again
from the start (after answers, or when it takes over a dead worker's task), and the context each
run gets. The layout of ``TaskRecord.request`` is this module's alone: ``new_record`` writes it,
``context_of`` reads it.

Every run of a task, in either era, gets an ``InputRound`` (``inputs.py``): its questions are
parked in the store, never sent from the run (2026-07-28: the task's ``inputRequests``;
2025-11-25: relayed on a ``tasks/result`` stream, ``relay.py``), and its notifications go nowhere.
"""

from __future__ import annotations

from typing import Any

from ..context import Context
from ..errors import ClientRequestError
from ..inputs import InputRound
from ..outbound import Outbound
from ..request_state import Binding, arguments_digest
from ..session import Session
from ..stores.tasks import TaskRecord, new_task_id, now_ms


class _Silent(Outbound):
    """Where a task's notifications go: nowhere (SEP-2663: no progress or log messages for
    tasks). A task's questions never reach it: its ``InputRound`` parks them in the store."""

    async def notify(self, method: str, params: dict[str, Any] | None) -> None:
        return None

    async def request(self, method: str, params: dict[str, Any] | None, timeout: float) -> dict[str, Any]:
        raise ClientRequestError(f"{method} cannot be sent from this task")


def input_round(
    principal: str | None, tool: str, arguments: dict[str, Any], answers: dict[str, Any], *, relayed: bool
) -> InputRound:
    """The questions and answers of one run of a task (``relayed``: a 2025-11-25 task's)."""
    digest = arguments_digest(arguments)
    return InputRound(answers, lambda: Binding(principal, "tools/call", tool, digest), relayed=relayed)


def first_context(
    session: Session, tool: str, arguments: dict[str, Any], inputs: InputRound | None
) -> Context:
    """The context of the run a call starts: the request's own round forked (2026-07-28: the
    questions answered in the request stay answered), or a new one (2025-11-25)."""
    if inputs is not None:
        inputs = inputs.fork()
    else:
        inputs = input_round(session.principal, tool, arguments, {}, relayed=not session.stateless)
    ctx = Context(session=session, outbound=_Silent(), inputs=inputs)
    ctx.task_run = True
    return ctx


def new_record(
    tool: str,
    arguments: dict[str, Any],
    session: Session,
    inputs: InputRound | None,
    version: str,
    *,
    ttl_ms: int | None,
    poll_interval_ms: int,
    owner: str,
    lease_ms: int,
    trace: dict[str, str],
) -> TaskRecord:
    """A new task for this call, leased to ``owner`` until ``lease_ms`` (epoch ms); ``trace``: the
    creating request's trace context (empty when tracing is off), the parent of every run."""
    request = {
        "arguments": arguments,
        "version": version,
        "stateless": session.stateless,
        # 2025-11-25: the session whose GET stream hears notifications/tasks/status.
        "session_id": None if session.stateless else session.id,
        "capabilities": session.client_capabilities,
        "client_info": session.client_info,
    }
    if trace:
        request["trace"] = trace
    return TaskRecord(
        task_id=new_task_id(),
        principal=session.principal,
        tool=tool,
        request=request,
        created_ms=now_ms(),
        ttl_ms=ttl_ms,
        poll_interval_ms=poll_interval_ms,
        answers=dict(inputs.answers) if inputs is not None else {},
        owner=owner,
        lease_ms=lease_ms,
    )


def trace_of(record: TaskRecord) -> dict[str, str]:
    """The creating request's trace context (``new_record``), for a later run's span."""
    trace = record.request.get("trace")
    return trace if isinstance(trace, dict) else {}


def context_of(record: TaskRecord) -> tuple[Context, dict[str, Any], str]:
    """A later run's context (with every answer so far), the call's arguments and its revision."""
    request = record.request
    session = Session(
        id=f"task-{record.task_id[:8]}",
        protocol_version=request["version"],
        client_info=request.get("client_info") or {},
        client_capabilities=request.get("capabilities") or {},
        principal=record.principal,
        state="ready",
        stateless=bool(request.get("stateless")),
    )
    arguments = request["arguments"]
    answers = dict(record.answers)
    inputs = input_round(record.principal, record.tool, arguments, answers, relayed=not session.stateless)
    ctx = Context(session=session, outbound=_Silent(), inputs=inputs)
    ctx.task_run = True
    return ctx, arguments, request["version"]
