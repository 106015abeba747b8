"""``RuntimeHost``: a server process's runtime, one per event loop, started before it serves.

Whoever serves ``/mcp`` is handed one host (``mcp_django`` builds it from settings and hands it
to the endpoint, the operations views and the management API); nothing finds it in a module
global. It is given ``build`` (a ``Runtime`` for a loop, with its dependencies) and ``backends``
(the stores and bus, for ending a session from a loop that serves nothing), and it:

- runs the runtime from the ASGI lifespan: ``lifespan`` (uvicorn sends it; Channels'
  ``ProtocolTypeRouter`` passes it on) enters ``run()`` on ``lifespan.startup`` and leaves it on
  ``lifespan.shutdown``. Daphne sends no lifespan: ``start_under_daphne()`` schedules the same
  start for when Twisted's reactor runs, and a reactor "before shutdown" trigger closes it. A
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

``current()`` is the hot path (every request): an attribute and two checks, no coroutine.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import sys
import threading
from collections.abc import AsyncIterator, Callable
from typing import Any

from ..bus.base import Bus
from ..stores.events import EventStore
from ..stores.sessions import SessionStore
from . import stopping
from .pending import PendingRequests
from .responses import Receive, Scope, Send
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
    ) -> None:
        self.build = build
        self.backends = backends
        self.on_started = on_started  # after the first start (the adapter tunes the GC there)
        self._runtime: Runtime | None = None
        self._tasks: set[asyncio.Task[None]] = set()  # strong references: a bare task may be collected
        self._daphne_scheduled = False

    # -- the runtime of the running loop ----------------------------------------------------------
    def current(self) -> Runtime | None:
        """The started runtime of the running loop, or None (the hot path: no coroutine, two checks)."""
        rt = self._runtime
        if rt is not None and rt.ready and rt.loop is asyncio.get_running_loop():
            return rt
        return None

    async def runtime(self) -> Runtime:
        """The runtime of the running loop, built and started on first use."""
        loop = asyncio.get_running_loop()
        rt = self._runtime
        if rt is None or rt.loop is not loop:
            rt = self._runtime = self.build(loop)
            self._register_daphne_shutdown(rt)
            self._hook_uvicorn_exit()
        if rt._started is None or not rt._started.done():
            await rt.ensure_started()
        return rt

    def forget(self) -> None:
        """Build afresh on next use (the settings changed: ``override_settings(MCP=...)`` in tests).
        The old runtime is not closed: its backends belong to the old settings."""
        self._runtime = None

    async def shutdown(self) -> None:
        """Close the current loop's runtime (lifespan shutdown, daphne reactor shutdown)."""
        rt, self._runtime = self._runtime, None
        if rt is not None and rt.loop is asyncio.get_running_loop():
            await rt.close()

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
            self._spawn(self._retry())

    def _started(self) -> None:
        if self.on_started is not None:
            self.on_started()  # after the start: the runtime's long-lived objects exist

    def _spawn(self, work: Any, loop: asyncio.AbstractEventLoop | None = None) -> None:
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

    async def lifespan(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The ASGI ``lifespan`` protocol: the runtime runs from ``lifespan.startup`` to
        ``lifespan.shutdown``, so the worker fans out changes before its first request."""
        message = await receive()
        if message["type"] != "lifespan.startup":
            return
        async with self.run():
            await send({"type": "lifespan.startup.complete"})
            while (await receive())["type"] != "lifespan.shutdown":
                pass
        await send({"type": "lifespan.shutdown.complete"})

    # -- the servers' own start and stop --------------------------------------------------------
    def start_under_daphne(self) -> None:
        """Daphne sends no ``lifespan``: run ``startup()`` once its reactor (on asyncio) runs."""
        if "daphne.server" not in sys.modules or self._daphne_scheduled:
            return
        try:
            from twisted.internet import reactor
        except ImportError:  # pragma: no cover
            return
        self._daphne_scheduled = True

        def when_running() -> None:
            # The reactor's loop, which may not be running yet when the startup trigger fires.
            self._spawn(self.startup(), asyncio.get_event_loop())

        twisted_reactor: Any = reactor
        twisted_reactor.callWhenRunning(when_running)

    def _register_daphne_shutdown(self, rt: Runtime) -> None:
        """Daphne runs on Twisted's asyncio reactor and sends no lifespan events: close the runtime
        from a "before shutdown" trigger so background tasks and pools end cleanly."""
        if "daphne.server" not in sys.modules:
            return
        try:
            from twisted.internet import defer, reactor
        except ImportError:  # pragma: no cover
            return

        def before_shutdown() -> Any:
            return defer.Deferred.fromFuture(asyncio.ensure_future(self.shutdown(), loop=rt.loop))

        twisted_reactor: Any = reactor
        twisted_reactor.addSystemEventTrigger("before", "shutdown", before_shutdown)

    def _hook_uvicorn_exit(self) -> None:
        """uvicorn waits for open responses to finish before it sends ``lifespan.shutdown``, and an
        SSE stream never finishes by itself: without this a SIGTERM would hang until killed. So
        chain onto uvicorn's SIGINT/SIGTERM handlers: end this worker's streams, then let uvicorn
        proceed (the approach of sse-starlette). Signal handlers can only be set from the main
        thread."""
        if "uvicorn.server" not in sys.modules or threading.current_thread() is not threading.main_thread():
            return
        for signum in (signal.SIGINT, signal.SIGTERM):
            previous = signal.getsignal(signum)
            if not callable(previous) or getattr(previous, "_mcpsite_hook", False):
                continue

            def handler(number: int, frame: Any, previous: Any = previous) -> None:
                rt = self._runtime
                if rt is not None and not rt.loop.is_closed():
                    rt.loop.call_soon_threadsafe(stopping.begin, rt)
                previous(number, frame)

            handler._mcpsite_hook = True  # type: ignore[attr-defined]
            signal.signal(signum, handler)
