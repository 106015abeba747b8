"""A mirrored tool's call run by its upstream as a task (issue 40 item 4, "tasks passed through").

Where the upstream declared task-augmented ``tools/call`` and the tool's ``execution.taskSupport``
(``Tool.upstream_task_support``), a call that runs as one of our tasks, or one the upstream
requires as a task, is sent as a task (2025-11-25 basic/utilities/tasks.mdx): ``tools/call`` with
``params.task``, answered by a ``CreateTaskResult``; then ``tasks/get`` every ``pollInterval``
(bounded) until the task is terminal or ``input_required`` (each new ``statusMessage`` shown on
our task: ``Context.report_task_status``), and ``tasks/result`` for the
``CallToolResult`` (or its error). Our cancellation (``tasks/cancel`` of our task on any worker,
our client's ``notifications/cancelled``, our timeout) is the upstream's ``tasks/cancel``.

Why our task's run drives the upstream task, rather than our ``tasks/get`` asking the upstream
(a mapping our task id → (upstream, upstream task id) that every worker follows): an upstream's
tasks are bound to the session or the credentials that made them (tasks.mdx "Security
Considerations": receivers SHOULD bind tasks to the authorization context), and each of our
workers has a session of its own (``pool.py``). Our task already is the one every worker reads
(``mcp_protocol/tasks``: one store, leases, takeover, cancel over the bus): its run polls the
upstream from the worker that made it, and stores the upstream's result as our task's, exactly
once. So our ``tasks/get`` and ``tasks/result`` on any worker answer from our store, our
``tasks/cancel`` on any worker stops the run, which cancels the upstream task, and nothing about
tasks is on the hot path of a plain call.

What this leaves (written in ``docs/guides/upstreams.md``):

- an upstream task that asks (``input_required``, its question on the ``tasks/result`` stream) is
  answered by our replay rule (``mcp_protocol/tasks``): our run parks the question and stops
  (cancelling the upstream task); the answered run starts a new upstream task, whose same question
  finds the answer at once. Correct, but the upstream's work before the question is done twice;
- a worker that dies mid-task: our task is taken over by our rules (re-run when the tool is
  marked idempotent, else failed retryably); the upstream task it drove runs on unobserved until
  its ttl;
- 2026-07-28 upstreams (the tasks extension: ``resultType: "task"``) and legacy HTTP+SSE upstreams
  are called plainly (a task needs the extension declared per request; we do not declare it, so
  they answer synchronously), and our run wraps that call as for any tool.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any

from .calls import UpstreamFailure, run
from .relay import Relay

Status = Callable[[str], Awaitable[None]]  # a status message for our task (Context.report_task_status)

TERMINAL = frozenset({"completed", "failed", "cancelled"})
FIRST_POLL = 0.5  # s: without a pollInterval from the upstream
MIN_POLL, MAX_POLL = 0.1, 5.0  # s: an upstream's pollInterval, bounded
CANCEL_SECONDS = 5.0  # the tasks/cancel sent on our cancellation, given up after this
MAX_SECONDS = 3600.0  # the longest an upstream task is followed (its ttl, if shorter)


async def call_as_task(sessions: Any, config: Any, name: str, arguments: dict[str, Any],
                       relay: Relay, status: Status | None = None) -> dict[str, Any]:
    """The upstream's ``CallToolResult`` for ``name``, run there as a task. ``status``: where the
    upstream's ``statusMessage`` goes as it changes (our task's own, ``Context.report_task_status``)."""
    created = await run(sessions, config, "tools/call", name,
                        {"name": name, "arguments": arguments, "task": {}}, relay)
    task = created.get("task")
    if not isinstance(task, dict):
        return created  # answered at once (a server may): the result itself
    task_id = task.get("taskId")
    if not isinstance(task_id, str) or not task_id:
        raise UpstreamFailure(f"upstream {config.name} answered with an invalid task")
    limit = _limit(task)
    mirror = _Mirror(status)
    try:
        async with asyncio.timeout(limit):
            await mirror(task)
            state, wait = task.get("status"), _interval(task)
            while state not in TERMINAL and state != "input_required":
                await asyncio.sleep(wait)
                polled = await run(sessions, config, "tasks/get", name, {"taskId": task_id}, relay)
                await mirror(polled)
                state, wait = polled.get("status"), _interval(polled, wait)
    except TimeoutError:
        # A task that never ends (a hostile or stuck upstream) holds our run no longer than its
        # ttl, after which the upstream may have deleted it (tasks.mdx "TTL"), nor MAX_SECONDS.
        with contextlib.suppress(Exception):
            await _cancel(sessions, config, name, task_id)
        raise UpstreamFailure(f"upstream {config.name}'s task did not finish within {limit:g} s") from None
    except asyncio.CancelledError:
        # tasks.mdx "Cancelling Tasks": our run stopped (cancelled, parked, our timeout): so does
        # the upstream's task. Shielded: the cancelled run must still send it.
        with contextlib.suppress(Exception):
            await asyncio.shield(_cancel(sessions, config, name, task_id))
        raise
    # tasks.mdx "Result Retrieval": the underlying request's result or error; for an
    # input_required task its questions come on this stream first (relayed: relay.py).
    try:
        return await run(sessions, config, "tasks/result", name, {"taskId": task_id}, relay)
    except asyncio.CancelledError:
        with contextlib.suppress(Exception):
            await asyncio.shield(_cancel(sessions, config, name, task_id))
        raise


class _Mirror:
    """The upstream task's ``statusMessage`` (tasks.mdx "Task Status": "the current task state"),
    passed on to our task each time it changes, while our run follows it."""

    def __init__(self, status: Status | None) -> None:
        self.status = status
        self.last: str | None = None

    async def __call__(self, task: dict[str, Any]) -> None:
        message = task.get("statusMessage")
        if self.status is None or not isinstance(message, str) or not message or message == self.last:
            return
        self.last = message
        await self.status(message)


async def _cancel(sessions: Any, config: Any, name: str, task_id: str) -> None:
    async with asyncio.timeout(CANCEL_SECONDS):
        await run(sessions, config, "tasks/cancel", name, {"taskId": task_id}, Relay(None))


def _limit(task: dict[str, Any]) -> float:
    ttl = task.get("ttl")
    if isinstance(ttl, int | float) and not isinstance(ttl, bool) and ttl > 0:
        return min(ttl / 1000, MAX_SECONDS)
    return MAX_SECONDS


def _interval(task: dict[str, Any], default: float = FIRST_POLL) -> float:
    interval = task.get("pollInterval")
    if isinstance(interval, int | float) and not isinstance(interval, bool) and interval > 0:
        return min(max(interval / 1000, MIN_POLL), MAX_POLL)
    return default
