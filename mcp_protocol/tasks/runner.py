"""``TaskRunner``: where tasks run, and what happens when they stop: started here, parked on a
question, resumed where answered, cancelled wherever they run, taken over from dead workers,
drained on SIGTERM. The lifecycle, step by step, is the package's docstring
(``mcp_protocol/tasks/__init__.py``), since it spans this module, ``outcome.py``, ``lapses.py``,
``drain.py`` and ``relay.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from .. import tracing
from ..bus.base import Bus, Subscription
from ..context import Context
from ..definitions import Tool
from ..inputs import InputRound
from ..provider import Provider
from ..session import Session
from ..store_errors import StoreUnavailable
from ..stores.tasks import (
    ANY_PRINCIPAL,
    CANCELLED,
    FAILED,
    Answered,
    Principal,
    TaskRecord,
    TaskStore,
    now_ms,
)
from .call import context_of, first_context, new_record, trace_of
from .drain import Drain
from .lapses import Sightings
from .outcome import (
    MAX_UNSTORED,
    WORKER_STOPPED,
    WORKER_STOPPED_MESSAGE,
    Outcome,
    idempotent,
    outcome_of,
    store_outcome,
    write,
)
from .signals import HANDOVER, announce, cancel_everywhere, channel
from .wire import task_to_wire

logger = logging.getLogger("mcp_protocol.tasks")
MAX_STATUS_CHARS = 1000  # of a run's status message, as stored

# Runs one tool call: the shaped CallToolResult, or an MCPError (a protocol error: ``failed``).
Execute = Callable[[Tool, dict[str, Any], Context, str], Coroutine[Any, Any, dict[str, Any]]]


@dataclass(slots=True)
class Started:
    """What ``start_call`` did: made a task, answered at once, or asked the client first."""

    record: TaskRecord | None = None
    result: dict[str, Any] | None = None
    asked: InputRound | None = None


class TaskRunner:
    def __init__(
        self,
        store: TaskStore,
        bus: Bus,
        provider: Provider,
        *,
        lease: float = 10.0,
        ttl_ms: int | None = 3_600_000,
        poll_interval_ms: int = 500,
        immediate: float = 0.1,
        on_created: Callable[[], None] | None = None,
        on_started: Callable[[int], None] | None = None,
        on_ended: Callable[[str, float, int], None] | None = None,
        legacy_status: Callable[[str, dict[str, Any]], Awaitable[None]] | None = None,
    ) -> None:
        self.store, self.bus, self.provider = store, bus, provider
        self.lease, self.ttl_ms, self.poll_interval_ms = lease, ttl_ms, poll_interval_ms
        self.immediate = immediate
        self.owner = f"w-{secrets.token_hex(8)}"  # this worker, in leases and on the bus
        self.execute: Execute | None = None  # set by the Server (methods/tools.execute_tool)
        self._jobs: dict[str, asyncio.Task[dict[str, Any]]] = {}
        # Runs that ended here whose outcome the store has not taken yet (outcome.py): their
        # leases stay renewed and nobody (this worker included) runs them again meanwhile.
        self._unstored: set[str] = set()
        # A lapsed lease is taken over once seen lapsed for half a lease (renewals come every
        # third of one): a live owner back from a store outage renews first (lapses.py).
        self._sightings = Sightings(lease / 2)
        self.drain = Drain(self)
        self._supervisors: set[asyncio.Task[None]] = set()
        self._upkeep: asyncio.Task[None] | None = None
        self._listeners: list[asyncio.Task[None]] = []
        self._subscriptions: list[Subscription] = []
        # Metrics hooks (transports/metrics.py, given by whoever builds the runner when metrics are on).
        self.on_created = on_created
        self.on_started = on_started  # runs on this worker now
        self.on_ended = on_ended  # status, s since creation, runs
        # 2025-11-25 notifications/tasks/status: (session id, the task) → its GET stream
        # (``transports/runtime.task_status_writer``: the session's standalone log, which any
        # worker's stream reads).
        self.legacy_status = legacy_status

    # -- lifecycle ----------------------------------------------------------------------------
    async def start(self) -> None:
        if self._upkeep is not None:
            return
        self._subscriptions = [
            await self.bus.subscribe(channel(self.owner)),
            await self.bus.subscribe(HANDOVER),
        ]
        self._listeners = [asyncio.create_task(self._listen(s)) for s in self._subscriptions]
        self._upkeep = asyncio.create_task(self._keep_up())

    @property
    def draining(self) -> bool:
        return self.drain.began

    async def close(self, grace: float = 0.0) -> None:
        """Stop: first the drain (``drain.py``: runs here finish within ``grace`` of the stop, or
        are handed over or failed), then the upkeep and the bus."""
        await self.drain.run(grace)
        for task in (self._upkeep, *self._listeners):
            if task is not None:
                task.cancel()
        for subscription in self._subscriptions:
            with contextlib.suppress(Exception):
                await subscription.close()
        self._subscriptions, self._listeners = [], []
        for job in [*self._jobs.values(), *self._supervisors]:
            job.cancel()  # a drain with no grace (tests, a failed start): the lease lapses
        self._upkeep = None

    @property
    def running(self) -> int:
        return len(self._jobs)

    # -- a call becomes a task ------------------------------------------------------------------
    async def start_call(
        self,
        tool: Tool,
        arguments: dict[str, Any],
        session: Session,
        inputs: InputRound | None,
        version: str,
        *,
        wait: bool,
        ttl_ms: int | None = None,
    ) -> Started:
        """Run ``tool``; ``wait``: up to ``immediate`` seconds for a result or a first question
        before it becomes a task (2026-07-28), else a task at once (2025-11-25, the client asked)."""
        assert self.execute is not None, "the Server sets TaskRunner.execute"
        detached = asyncio.Event()
        ctx = first_context(session, tool.name, arguments, inputs)
        ctx.on_detach = detached.set
        inputs = ctx.inputs
        trace = tracing.carrier()  # the tools/call being served: the parent of every run
        job = asyncio.create_task(self._run(tool, arguments, ctx, version, trace))
        if inputs is not None:
            inputs.task = job  # a question stops the tool's run, not the request
        created = False
        try:
            if wait:
                waiter = asyncio.create_task(detached.wait())
                try:
                    await asyncio.wait(
                        {job, waiter}, timeout=self.immediate, return_when=asyncio.FIRST_COMPLETED
                    )
                finally:
                    waiter.cancel()
                if job.done() and not detached.is_set():
                    if job.cancelled():
                        return Started(asked=inputs)
                    return Started(result=job.result())
            ttl = self.ttl_ms if ttl_ms is None else (min(ttl_ms, self.ttl_ms) if self.ttl_ms else ttl_ms)
            record = new_record(
                tool.name,
                arguments,
                session,
                inputs,
                version,
                ttl_ms=ttl,
                poll_interval_ms=self.poll_interval_ms,
                owner=self.owner,
                lease_ms=now_ms() + int(self.lease * 1000),
                trace=trace,
            )
            await self.store.create(record)
            created = True
            ctx.on_status = self._status_of(record.task_id)
            self._jobs[record.task_id] = job  # renewed from now on (the record exists)
            if self.on_created is not None:
                self.on_created()
            self._watch(record.task_id, job, inputs, record.created_ms)
            return Started(record=record)
        finally:
            if not created and not job.done():
                job.cancel()

    # -- a run ends -----------------------------------------------------------------------------
    async def _supervise(
        self, task_id: str, job: asyncio.Task[dict[str, Any]], inputs: InputRound | None, created_ms: int
    ) -> None:
        """Store what the run ended with, exactly once (``outcome.py``): while the store is away
        the task stays this worker's (its lease renewed, never run again) until it is stored."""
        await asyncio.wait({job})
        outcome = outcome_of(job, inputs)
        if outcome.unexpected is not None:
            logger.error("Task %s failed", task_id, exc_info=outcome.unexpected)
        stored = outcome.status == CANCELLED  # nothing of ours to write
        try:
            if not stored:
                self._unstored.add(task_id)  # renewed by tick, skipped by take
                if self._jobs.get(task_id) is job:
                    del self._jobs[task_id]
                stored = await self._store(task_id, outcome)
        finally:
            self._unstored.discard(task_id)
            if self._jobs.get(task_id) is job:
                del self._jobs[task_id]
            # Counted before the change goes out: a client that hears of it and then scrapes
            # /metrics finds the run there.
            if self.on_ended is not None:
                self.on_ended(outcome.status, (now_ms() - created_ms) / 1000, len(self._jobs))
            if stored and outcome.status != CANCELLED:
                await self.changed(task_id)

    async def _store(self, task_id: str, outcome: Outcome) -> bool:
        try:
            return await write(self.store, task_id, self.owner, outcome)
        except StoreUnavailable:
            pass
        if len(self._unstored) > MAX_UNSTORED:
            logger.error("Task %s: its outcome cannot be stored and %d others wait; given up (its lease "
                         "will lapse and the task be taken over as after a crash)", task_id, MAX_UNSTORED)
            return False
        logger.warning("Task %s: the task store is unavailable; its outcome waits here to be stored", task_id)
        return await store_outcome(self.store, task_id, self.owner, outcome, self.lease / 6)

    # -- resume, take over, cancel --------------------------------------------------------------
    async def take(self, task_id: str) -> bool:
        """Claim a task nobody runs (answered, handed over, or its lease lapsed) and run or fail it
        here. A lapsed lease is a dead owner's whoever held it, this worker included: a run of
        ours that is no longer in ``_jobs`` ended, and its outcome is stored or given up, so the
        tool never runs twice unless it is idempotent (issue 38)."""
        if task_id in self._jobs or task_id in self._unstored or self.draining:
            return False
        record = await self.store.claim(task_id, self.owner, now_ms() + int(self.lease * 1000))
        if record is None:
            return False
        tool = self.provider.snapshot().tool(record.tool)
        died = record.owner is not None
        if tool is None or (died and not idempotent(tool)):
            await self.store.finish(
                task_id, self.owner, FAILED, error=dict(WORKER_STOPPED), message=WORKER_STOPPED_MESSAGE
            )
            await self.changed(task_id)
            return True
        self._launch(record, tool)
        return True

    def _launch(self, record: TaskRecord, tool: Tool) -> None:
        assert self.execute is not None
        ctx, arguments, version = context_of(record)
        ctx.on_status = self._status_of(record.task_id)
        job = asyncio.create_task(self._run(tool, arguments, ctx, version, trace_of(record)))
        if ctx.inputs is not None:
            ctx.inputs.task = job
        self._jobs[record.task_id] = job
        self._watch(record.task_id, job, ctx.inputs, record.created_ms)

    def _status_of(self, task_id: str) -> Callable[[str], Awaitable[None]]:
        """A run's ``Context.report_task_status``: the message noted on its task while this worker
        holds it (``TaskStore.note``), the listeners told as for any change. A store away drops
        the message (the run goes on: a status message is a courtesy, not the task's state)."""

        async def note(message: str) -> None:
            try:
                noted = await self.store.note(task_id, self.owner, message[:MAX_STATUS_CHARS])
            except StoreUnavailable:
                return
            if noted:
                await self.changed(task_id)

        return note

    async def _run(
        self, tool: Tool, arguments: dict[str, Any], ctx: Context, version: str, trace: dict[str, str]
    ) -> dict[str, Any]:
        """One run of a task's tool, in a span of its own: the child of the tools/call that made
        the task (``trace``), on whichever worker runs it, linked to the request that set it off
        here when that is another one (answers through tasks/update, a takeover's tasks/get)."""
        assert self.execute is not None
        ambient = tracing.carrier()
        with tracing.consumer(f"run task {tool.name}", trace, {"gen_ai.tool.name": tool.name}):
            if ambient.get("traceparent") != trace.get("traceparent"):
                tracing.link(ambient)
            return await self.execute(tool, arguments, ctx, version)

    def _watch(
        self, task_id: str, job: asyncio.Task[dict[str, Any]], inputs: InputRound | None, created_ms: int
    ) -> None:
        if self.on_started is not None:
            self.on_started(len(self._jobs))
        supervisor = asyncio.create_task(self._supervise(task_id, job, inputs, created_ms))
        self._supervisors.add(supervisor)  # a reference until it ends (asyncio keeps weak ones)
        supervisor.add_done_callback(self._supervisors.discard)

    async def answer(
        self, task_id: str, principal: Principal, responses: dict[str, dict[str, Any]]
    ) -> Answered:
        """Record answers to the task's questions (2026-07-28 ``tasks/update``; 2025-11-25 replies
        relayed by ``tasks/result``); once none is left the task runs on here (the sweeps of
        every worker are the backstop)."""
        outcome = await self.store.answer(task_id, principal, responses)
        if outcome in (Answered.PENDING, Answered.READY):
            await self.changed(task_id)
        if outcome is Answered.READY:
            await self.take(task_id)
        return outcome

    async def cancel(self, task_id: str, principal: Principal) -> TaskRecord | None:
        """Cancel on any worker; stop the run where it is. The record as found (None: unknown)."""
        found = await cancel_everywhere(self.store, self.bus, task_id, principal, here=self)
        if found is not None and not found.terminal:
            await self.changed(task_id, announced=True)
        return found

    async def cancel_all_of(self, principals: set[str]) -> int:
        """Cancel every unfinished task of these principals (their keys were revoked or expired:
        their work stops with their streams and sessions). How many were cancelled."""
        cancelled = 0
        for principal in sorted(principals):
            offset: int | None = 0
            while offset is not None:
                page, offset = await self.store.list_tasks(principal, offset, 500)
                for record in page:
                    if not record.terminal and await self.cancel(record.task_id, principal) is not None:
                        cancelled += 1
        return cancelled

    async def changed(self, task_id: str, *, announced: bool = False) -> None:
        """The task changed here: tell the listen streams following it (any worker), and its
        2025-11-25 session's GET stream (tasks.mdx "Task Status Notification": MAY)."""
        if not announced:
            await announce(self.bus, task_id)
        if self.legacy_status is None:
            return
        with contextlib.suppress(StoreUnavailable):
            record = await self.store.get(task_id, ANY_PRINCIPAL)
            session_id = record.request.get("session_id") if record is not None else None
            if record is not None and isinstance(session_id, str):
                await self.legacy_status(session_id, task_to_wire(record, modern=False))

    def stop(self, task_id: str) -> None:
        job = self._jobs.get(task_id)
        if job is not None:
            job.cancel()

    async def _listen(self, subscription: Subscription) -> None:
        async for message in subscription:
            task_id = message.get("cancel")
            if isinstance(task_id, str):
                self.stop(task_id)
            handed = message.get("handover")
            if isinstance(handed, str):  # a stopping worker released it: take it now, not at a sweep
                try:
                    await self.take(handed)
                except StoreUnavailable:
                    logger.warning("task %s handed over: the task store is unavailable", handed)

    async def _keep_up(self) -> None:
        period = self.lease / 3
        while True:
            await asyncio.sleep(period)
            try:
                await self.tick()
            except StoreUnavailable:
                self._sightings.forget()  # the store's absence is not a dead owner's
                logger.warning("task upkeep: the task store is unavailable")
            except Exception:
                logger.exception("task upkeep failed")

    async def tick(self) -> None:
        """Renew this worker's leases (a run whose task was cancelled or taken stops; an outcome
        waiting for the store keeps its task), then take over the tasks nobody runs (none while
        draining)."""
        ids = [*self._jobs, *self._unstored]
        if ids:
            kept = await self.store.renew(ids, self.owner, now_ms() + int(self.lease * 1000))
            for task_id in set(ids) - kept:
                self.stop(task_id)
        if self.draining:
            return
        lapsed = await self.store.lapsed()
        for task_id in self._sightings.due(lapsed, asyncio.get_running_loop().time()):
            self._sightings.forget(task_id)
            await self.take(task_id)
