"""``RuntimeHost``: a server process's runtime, one per event loop, started before it serves.

Whoever serves ``/mcp`` is handed one host (``mcp_django`` builds it from settings and hands it
to the endpoint, the operations views and the management API); nothing finds it in a module
global. It is given ``build`` (a ``Runtime`` for a loop, with its dependencies) and ``backends``
(the stores and bus, for ending a session from a loop that serves nothing), and it:

- runs the runtime of its loop inside ``runtime.run()`` (the runtime's one way to start) from
  ``startup()`` to ``shutdown()``; ``run()`` is both as ``async with``. What calls them is the
  ASGI server's own start and stop, which only the adapter knows (``mcp_django/servers.py``:
  uvicorn's lifespan, daphne's reactor triggers; ``on_built`` lets it hook a new runtime). A
  request on a loop with no runtime yet builds and starts one (``runtime()``), as before.
- starts the runtime at process startup, not at the first request. A worker used to build its
  runtime (provider snapshot, ``changes`` subscription, fan-out) on its first ``/mcp`` request;
  until then it heard no change, and with one worker writing a change's notifications and every
  other worker waiting for it (``fanout/``), a client that resumed its stream on a worker that
  had served nothing lost whatever was published before that worker woke.
- keeps a process that failed to start (Redis down at boot) running: it is not ready, and keeps
  retrying in the background (``RETRY_MIN`` doubling to ``RETRY_MAX``) until it is; a request
  meanwhile retries the start itself.
- answers readiness (``ready()``, for ``/readyz``): this loop's runtime is started and its
  ``changes`` subscription is being read.
- after the runtime stopped, closes the backends through ``close_backends`` (they are the
  builder's, not the runtime's).

``current()`` is the hot path (every request): an attribute and two checks, no coroutine.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from ..bus.base import Bus
from ..stores.events import EventStore
from ..stores.sessions import SessionStore
from .pending import PendingRequests
from .runtime import Runtime, end_session

logger = logging.getLogger("mcp_protocol.runtime")

RETRY_MIN = 0.2  # s: first pause before retrying a failed start
RETRY_MAX = 5.0  # s: longest pause between retries

Backends = tuple[SessionStore, EventStore, Bus]


class RuntimeHost:
    def __init__(
        self,
        build: Callable[[asyncio.AbstractEventLoop], Runtime],
        backends: Callable[[], Backends],
        *,
        on_started: Callable[[], object] | None = None,
        on_built: Callable[[RuntimeHost, Runtime], object] | None = None,
        close_backends: Callable[[Runtime], Awaitable[None]] | None = None,
    ) -> None:
        self.build = build
        self.backends = backends
        self.on_started = on_started  # after the first start (the adapter tunes the GC there)
        self.on_built = on_built  # a runtime was built: the ASGI server's hooks (mcp_django/servers.py)
        self.close_backends = close_backends  # after the runtime stopped, on its loop
        self._runtime: Runtime | None = None
        self._running: contextlib.AsyncExitStack | None = None  # inside the runtime's run()
        self._starting: asyncio.Future[None] | None = None
        self._tasks: set[asyncio.Task[None]] = set()  # strong references: a bare task may be collected

    # -- the runtime of the running loop ----------------------------------------------------------
    def current(self) -> Runtime | None:
        """The started runtime of the running loop, or None (the hot path: no coroutine, two checks)."""
        rt = self._runtime
        if rt is not None and rt.ready and rt.loop is asyncio.get_running_loop():
            return rt
        return None

    @property
    def built(self) -> Runtime | None:
        """The last runtime built, started or not, on whichever loop (for signal handlers)."""
        return self._runtime

    async def runtime(self) -> Runtime:
        """The runtime of the running loop, built and started on first use."""
        loop = asyncio.get_running_loop()
        rt = self._runtime
        if rt is None or rt.loop is not loop:
            rt = self._runtime = self.build(loop)
            self._running, self._starting = None, None
            if self.on_built is not None:
                self.on_built(self, rt)
        if not rt.ready:
            await self._enter(rt)
        return rt

    async def _enter(self, rt: Runtime) -> None:
        """Enter ``rt.run()`` once, however many requests ask at the same time."""
        if self._starting is None:
            self._starting = starting = rt.loop.create_future()
            running = contextlib.AsyncExitStack()
            try:
                await running.enter_async_context(rt.run())
            except BaseException as exc:
                self._starting = None  # a later request retries the start
                starting.set_exception(exc)
                starting.exception()  # retrieved: no "never retrieved" warning
                raise
            self._running = running
            starting.set_result(None)
        elif not self._starting.done():
            await asyncio.shield(self._starting)

    def forget(self) -> None:
        """Build afresh on next use (the settings changed: ``override_settings(MCP=...)`` in tests).
        The old runtime is not closed: its backends belong to the old settings."""
        self._runtime, self._running, self._starting = None, None, None

    async def shutdown(self) -> None:
        """Stop the current loop's runtime (leave its ``run()``), then close the backends."""
        rt, self._runtime = self._runtime, None
        running, self._running, self._starting = self._running, None, None
        if rt is None or rt.loop is not asyncio.get_running_loop():
            return
        if running is not None:
            await running.aclose()
        if self.close_backends is not None:
            await self.close_backends(rt)

    def ready(self) -> bool:
        """Started and subscribed: the runtime of the running loop listens to ``changes``."""
        rt = self.current()
        return rt is not None and rt.fanout.listening

    async def terminate(self, session_id: str) -> bool:
        """End a session from outside ``/mcp`` (the management API), exactly as its DELETE does. On a
        loop that serves ``/mcp`` this is its runtime's ``end_session``; elsewhere (a management
        command, a test client) nothing of the session runs in this loop, so the stores and the bus
        are enough. True if the session was live."""
        rt = self.current()
        if rt is not None:
            return await rt.end_session(session_id)
        sessions, events, bus = self.backends()
        return await end_session(sessions, events, PendingRequests(bus), session_id)

    # -- started with the process -----------------------------------------------------------------
    @contextlib.asynccontextmanager
    async def run(self) -> AsyncIterator[RuntimeHost]:
        """``async with host.run():`` the runtime of this loop, started now (or retried in the
        background when it cannot start yet) and closed at the end."""
        await self.startup()
        try:
            yield self
        finally:
            await self.shutdown()

    async def startup(self) -> None:
        """Start this loop's runtime now; on failure, log and keep retrying in the background."""
        try:
            await self.runtime()
            logger.info("MCP runtime started: subscribed to the bus")
            self._started()
        except Exception as exc:
            logger.warning("MCP runtime could not start (%s); retrying in the background: not ready", exc)
            self.spawn(self._retry())

    def _started(self) -> None:
        if self.on_started is not None:
            self.on_started()  # after the start: the runtime's long-lived objects exist

    def spawn(self, work: Any, loop: asyncio.AbstractEventLoop | None = None) -> None:
        """Run ``work`` as a task of ``loop`` (the running one), kept until it ends."""
        task = (loop or asyncio.get_running_loop()).create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _retry(self) -> None:
        pause = RETRY_MIN
        while True:
            await asyncio.sleep(pause)
            try:
                await self.runtime()
            except Exception as exc:
                logger.debug("MCP runtime start failed again: %s", exc)
                pause = min(pause * 2, RETRY_MAX)
                continue
            logger.info("MCP runtime started after a retry: subscribed to the bus")
            self._started()
            return
