"""What a run of a task ended with, and storing it exactly once.

A task's run and its outcome are one exactly-once unit (issue 38; the tasks issue 26 forbade a
second run of a tool not marked idempotent). So the outcome of a run that ended here (a result,
an error, or the questions it parked on) is the worker's to store, however long the store is
away: ``store_outcome`` retries it with a capped, jittered backoff until the store takes it or
refuses it for good (the task was cancelled, taken, or is gone), and meanwhile the runner keeps
the task's lease renewed and never runs the task again (``TaskRunner._unstored``).

Memory stays bounded: at most ``MAX_UNSTORED`` outcomes wait at once per worker. One more is
given up at once (logged): its lease lapses and whichever worker sweeps it takes it over exactly
as after a crash (a lapsed lease is a dead owner's, ours included: ``TaskRunner.take``): a tool
not marked idempotent ends ``failed`` with the retryable "worker stopped" error, never run twice.
"""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass, field
from typing import Any

from ..definitions import Tool
from ..errors import InternalError, MCPError
from ..inputs import InputRound
from ..store_errors import StoreUnavailable
from ..stores.tasks import CANCELLED, COMPLETED, FAILED, INPUT_REQUIRED, TaskStore

WORKER_STOPPED_MESSAGE = "The worker running this task stopped before it finished; the task may be retried"
WORKER_STOPPED: dict[str, Any] = {
    "code": -32603,
    "message": WORKER_STOPPED_MESSAGE,
    "data": {"retryable": True},
}
MAX_UNSTORED = 1_000  # outcomes waiting for the store at once, per worker
FIRST_RETRY = 0.05  # s: the first wait after a failed write; doubled up to the cap each time


def idempotent(tool: Tool) -> bool:
    """May a run of ``tool`` be started again after one stopped midway (a takeover, a handover)?
    Only when the tool says so (``annotations.idempotentHint``)."""
    return (tool.annotations or {}).get("idempotentHint") is True


@dataclass(slots=True)
class Outcome:
    """How a run ended: ``status`` with its ``result`` / ``error`` / parked ``questions``."""

    status: str
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    message: str | None = None
    questions: dict[str, dict[str, Any]] = field(default_factory=dict)
    unexpected: BaseException | None = None  # a bug in the tool: logged with its traceback


def outcome_of(job: asyncio.Task[dict[str, Any]], inputs: InputRound | None) -> Outcome:
    """The outcome of a run that is done: ``cancelled`` means nothing of the run's to store
    (tasks/cancel, a lost lease, shutdown), unless it stopped on its questions."""
    if job.cancelled():
        if inputs is not None and inputs.parked:
            return Outcome(INPUT_REQUIRED, message="Waiting for input", questions=inputs.questions)
        return Outcome(CANCELLED)
    error = job.exception()
    if error is None:
        return Outcome(COMPLETED, result=job.result())
    if isinstance(error, MCPError):
        return Outcome(FAILED, error=error.to_error(), message=error.message)
    return Outcome(FAILED, error=InternalError().to_error(), message="Internal error", unexpected=error)


async def write(store: TaskStore, task_id: str, owner: str, outcome: Outcome) -> bool:
    """One attempt; False: refused for good (cancelled, taken by another worker, gone)."""
    if outcome.status == INPUT_REQUIRED:
        return await store.park(task_id, owner, outcome.questions, outcome.message)
    return await store.finish(
        task_id, owner, outcome.status, result=outcome.result, error=outcome.error, message=outcome.message
    )


async def store_outcome(store: TaskStore, task_id: str, owner: str, outcome: Outcome, cap: float) -> bool:
    """Write ``outcome`` until the store takes it (True) or refuses it for good (False), waiting
    between attempts from ``FIRST_RETRY`` doubling up to ``cap`` seconds (jittered, so the
    workers of a fleet do not all come back to a restarted Redis at one instant)."""
    wait = FIRST_RETRY
    while True:
        try:
            return await write(store, task_id, owner, outcome)
        except StoreUnavailable:
            await asyncio.sleep(wait * random.uniform(0.5, 1.0))
            wait = min(wait * 2, cap)
