"""A stopping worker's tasks: finished within the grace, else handed over or failed (issue 38).

A worker told to stop (SIGTERM: ``transports/stopping.py`` calls ``begin``) gives its requests
``shutdown_grace`` seconds, and its task runs the same grace, counted from the same instant:

- from ``begin`` on it takes no task (no sweep, no takeover, no handover) and keeps renewing
  the leases of its runs, so a run with 3 s left of a 10 s grace completes here and its result
  is stored (``outcome.py``: retried while the store is away, within the grace);
- at the end of the grace each run still going stops, and its task goes where the takeover rule
  of the tasks issue sends a dead worker's: a tool marked idempotent (``idempotentHint``) is
  handed over, its lease released (``TaskStore.release``) and announced on ``tasks:handover``
  so another worker claims it and runs it afresh at once instead of a lease later; any other
  tool's task ends ``failed`` with the retryable "worker stopped" error now (running it again
  could repeat its side effect), which is what a takeover would do a lease later.

The drain ends when every run ended and every outcome was stored, or at the end of the grace
(``close`` then cancels what is left: an outcome not stored by then lapses with its lease and is
failed by the next sweep, never run again).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any, Protocol

from ..bus.base import Bus
from ..provider import Provider
from ..store_errors import StoreUnavailable
from ..stores.tasks import ANY_PRINCIPAL, FAILED, TaskStore
from .outcome import WORKER_STOPPED, WORKER_STOPPED_MESSAGE, idempotent
from .signals import HANDOVER

logger = logging.getLogger("mcp_protocol.tasks")


class Runs(Protocol):
    """The runner (``runner.py``) as its drain uses it: its runs, and where their tasks live."""

    owner: str
    store: TaskStore
    bus: Bus
    provider: Provider
    _jobs: dict[str, asyncio.Task[dict[str, Any]]]
    _supervisors: set[asyncio.Task[None]]

    async def changed(self, task_id: str, *, announced: bool = False) -> None: ...


class Drain:
    def __init__(self, runner: Runs) -> None:
        self.runner = runner
        self.deadline: float | None = None  # loop time the grace ends

    @property
    def began(self) -> bool:
        return self.deadline is not None

    def begin(self, grace: float) -> None:
        """The worker was told to stop: take nothing more, and end the runs within ``grace``."""
        if self.deadline is None:
            self.deadline = asyncio.get_running_loop().time() + max(0.0, grace)

    async def run(self, grace: float) -> None:
        """Wait (until the deadline of ``begin``, or ``grace`` from now) for the runs to end and
        their outcomes to be stored; then hand over or fail each run still going."""
        self.begin(grace)
        assert self.deadline is not None
        runner = self.runner
        waiting = {*runner._jobs.values(), *runner._supervisors}
        left = self.deadline - asyncio.get_running_loop().time()
        if waiting and left > 0:
            await asyncio.wait(waiting, timeout=left)
        for task_id in list(runner._jobs):
            with contextlib.suppress(StoreUnavailable):
                await self._stop(task_id)

    async def _stop(self, task_id: str) -> None:
        runner = self.runner
        job = runner._jobs.pop(task_id, None)
        if job is None:
            return
        job.cancel()  # cancelled: its supervisor writes nothing
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await job
        record = await runner.store.get(task_id, ANY_PRINCIPAL)
        tool = runner.provider.snapshot().tool(record.tool) if record is not None else None
        if tool is not None and idempotent(tool):
            if await runner.store.release(task_id, runner.owner):
                logger.info("Task %s: handed over (the worker stops, the tool is idempotent)", task_id)
                with contextlib.suppress(StoreUnavailable):
                    await runner.bus.publish(HANDOVER, {"handover": task_id})
            return
        if await runner.store.finish(
            task_id, runner.owner, FAILED, error=dict(WORKER_STOPPED), message=WORKER_STOPPED_MESSAGE
        ):
            logger.warning("Task %s: failed, still running when the worker's grace ended", task_id)
            await runner.changed(task_id)
