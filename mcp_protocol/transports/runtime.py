"""The process-wide objects the HTTP endpoint serves with, built lazily per event loop.

Owns: the ``Server`` (from ``mcp_settings``), the settings-chosen stores, bus and provider, the
session channels (server→client requests awaiting answers, cancels from other workers:
``pending.py``), the registry of live SSE streams per session (so DELETE closes them on this
worker at once), and the ``changes`` listener (``fanout/``). Daphne sends no ASGI
lifespan events, so nothing is opened at import: the first request builds the runtime for its
loop, refreshes the provider once and starts the listener. ``shutdown()`` closes it all; it is
called on ``lifespan.shutdown`` (uvicorn) and from a reactor shutdown trigger under daphne.

This module reads Django settings through ``conf.mcp_settings`` (the only Django touchpoint); the
objects it builds are Django-free.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.core.signals import setting_changed

from ..auth.access import Access
from ..bus.base import Bus
from ..conf import DEFAULTS, build_server, mcp_settings
from ..fanout import Fanout
from ..provider import Provider
from ..server import Server
from ..session import Session
from ..stores.errors import StoreUnavailable
from ..stores.events import EventStore
from ..stores.sessions import SessionStore
from . import auth, metrics, stopping
from .later import Wheel
from .leases import Leases
from .pending import PendingRequests
from .security import OriginGuard
from .standalone import StandaloneOutbound
from .watch import EndSignal

logger = logging.getLogger("mcp_protocol.runtime")


@dataclass(frozen=True, slots=True)
class TransportConfig:
    always_stream: bool
    keepalive: float
    retry_ms: int
    close_after: float | None
    max_body: int
    allowed_hosts: list[str]
    allowed_origins: list[str]
    metrics: bool = False  # from_settings() reads MCP_METRICS; hand-built configs (tests) skip it
    shutdown_grace: float = 10.0  # s: in-flight requests may finish this long after SIGTERM

    @classmethod
    def from_settings(cls) -> TransportConfig:
        close_after = mcp_settings.CLOSE_STREAM_AFTER_SECONDS
        return cls(
            always_stream=bool(mcp_settings.ALWAYS_STREAM),
            keepalive=float(mcp_settings.KEEPALIVE_SECONDS),
            retry_ms=int(mcp_settings.SSE_RETRY_MS),
            close_after=None if close_after is None else float(close_after),
            max_body=int(mcp_settings.MAX_BODY_BYTES),
            allowed_hosts=list(mcp_settings.ALLOWED_HOSTS),
            allowed_origins=list(mcp_settings.ALLOWED_ORIGINS),
            metrics=bool(mcp_settings.METRICS),
            shutdown_grace=float(mcp_settings.SHUTDOWN_GRACE_SECONDS),
        )


class Runtime:
    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.config = TransportConfig.from_settings()
        self.provider: Provider = mcp_settings.backend("PROVIDER")
        self.sessions: SessionStore = mcp_settings.backend("SESSION_STORE")
        self.events: EventStore = mcp_settings.backend("EVENT_STORE")
        self.bus: Bus = mcp_settings.backend("BUS")
        self.server: Server = build_server(self.provider)
        self.access = Access.from_settings(self.bus, self.sessions, self.events, self.provider.capabilities)
        self.server.interceptor = self.access.guard  # rate limits and audit around each call
        if self.config.metrics and self.access.audit is not None:
            self.access.audit.on_drop = metrics.audit_dropped
        self.pending = PendingRequests(
            self.bus, on_cancel=self.server.cancel, on_session_end=self.session_ended)
        from django.conf import settings

        self.guard = OriginGuard(
            self.config.allowed_hosts, self.config.allowed_origins, list(settings.ALLOWED_HOSTS)
        )
        self.resolve_principal: Any = mcp_settings.principal_resolver()
        if self.access.mode != "open" and mcp_settings.PRINCIPAL_RESOLVER == DEFAULTS["PRINCIPAL_RESOLVER"]:
            self.resolve_principal = auth.resolver(self.access)  # MCP_AUTH: keys and/or OAuth
        self.fanout = Fanout(self.provider, self.sessions, self.events, self.bus,
                             on_message=metrics.on_bus_message if self.config.metrics else None,
                             feed=self.server.feed)
        self.leases = Leases(self.events)
        self.stopping = False  # told to stop (SIGTERM): see stopping.py
        self.later = Wheel()  # the request path's "still running in 0.1 s?" timers
        self._live: dict[str, list[EndSignal]] = {}
        self._started: asyncio.Future[None] | None = None
        self.ready = False

    # -- start / stop ---------------------------------------------------------------------------
    async def ensure_started(self) -> None:
        if self._started is None:
            self._started = self.loop.create_future()
            try:
                await self.provider.refresh()
                await self.access.start()
                await self.fanout.start()
            except BaseException as exc:
                started, self._started = self._started, None
                started.set_exception(exc)
                started.exception()  # retrieved: a later request retries the start
                raise
            self._started.set_result(None)
            self.ready = True
        elif not self._started.done():
            await asyncio.shield(self._started)

    async def close(self) -> None:
        self.server.feed.close()
        for group in self._live.values():
            for ended in group:
                ended.set()
        await self.fanout.stop()
        await self.pending.close()
        with contextlib.suppress(Exception):
            await self.access.close()
        for backend in (self.sessions, self.events, self.bus):
            with contextlib.suppress(Exception):
                await backend.close()
        metrics.process_exiting()
        logger.info("MCP runtime closed")

    def standalone(self, session: Session) -> StandaloneOutbound:
        """Reach the session on its GET stream with messages that belong to no client request
        (from any worker: see ``standalone.py``)."""
        return StandaloneOutbound(self.events, self.pending, session)

    # -- live streams of each session on this worker --------------------------------------------
    def register_stream(self, session_id: str) -> EndSignal:
        ended = EndSignal()  # calls its stream's watch back: no task waits on it
        self._live.setdefault(session_id, []).append(ended)
        if self.config.metrics:
            metrics.stream_opened()
        return ended

    def unregister_stream(self, session_id: str, ended: EndSignal) -> None:
        if self.config.metrics:
            metrics.stream_closed()
        group = self._live.get(session_id)
        if group is not None:
            with contextlib.suppress(ValueError):
                group.remove(ended)
            if not group:
                del self._live[session_id]

    def end_streams(self, session_id: str) -> None:
        for ended in self._live.pop(session_id, ()):
            ended.set()

    async def end_session(self, session_id: str) -> bool:
        """End a session everywhere: an MCP DELETE, or the management API's. True if it was live."""
        return await end_session(self.sessions, self.events, self.pending, session_id,
                                 here=self.session_ended)

    def session_ended(self, session_id: str) -> None:
        """The session was deleted (here, or on another worker): stop its requests running here
        and end its streams (with ``retry``; a resume would get 404)."""
        self.server.cancel_session(session_id)
        self.end_streams(session_id)

    def end_all_streams(self) -> None:
        """Server shutdown: end every open SSE response (with ``retry``, so clients come back),
        and every subscriptions/listen stream with its graceful-closure result."""
        for session_id in list(self._live):
            self.end_streams(session_id)
        self.server.feed.close()


async def end_session(sessions: SessionStore, events: EventStore, pending: PendingRequests,
                      session_id: str, here: Callable[[str], None] | None = None) -> bool:
    """The one way a session ends ([L] basic/transports.mdx "Session Management": later requests
    with its id get 404). ``here``: stop what runs on this worker at once."""
    existed = await sessions.delete(session_id)  # from now on every worker answers 404
    # Its requests stop and its streams end: here at once; on other workers through the session's
    # bus channel (requests listening there) and at the next heartbeat (GET streams).
    if here is not None:
        here(session_id)
    try:
        await pending.end_session(session_id)
    except StoreUnavailable:
        logger.warning("could not tell other workers that a session ended")
    await events.delete_session(session_id)
    return existed


async def terminate(session_id: str) -> bool:
    """End a session from outside ``/mcp`` (the management API), exactly as its DELETE does. On a
    loop that serves ``/mcp`` this is its runtime's ``end_session``; elsewhere (a management
    command, a test client) nothing of the session runs in this loop, so the stores and the bus
    are enough. True if the session was live."""
    rt = current()
    if rt is not None:
        return await rt.end_session(session_id)
    pending = PendingRequests(mcp_settings.backend("BUS"))
    return await end_session(mcp_settings.backend("SESSION_STORE"), mcp_settings.backend("EVENT_STORE"),
                             pending, session_id)


_runtime: Runtime | None = None


def _forget(*, setting: str, **kwargs: Any) -> None:
    """``override_settings(MCP=...)`` in tests: the next request builds a runtime from the new
    settings (``conf`` drops its backends on the same signal)."""
    global _runtime
    if setting == "MCP":
        _runtime = None


setting_changed.connect(_forget)


def current() -> Runtime | None:
    """The started runtime of the running loop, or None (the hot path: no coroutine, two checks)."""
    rt = _runtime
    if rt is not None and rt.ready and rt.loop is asyncio.get_running_loop():
        return rt
    return None


async def get_runtime() -> Runtime:
    """The runtime of the running loop, built and started on first use."""
    global _runtime
    loop = asyncio.get_running_loop()
    rt = _runtime
    if rt is None or rt.loop is not loop:
        rt = _runtime = Runtime(loop)
        _register_daphne_shutdown(rt)
        _hook_uvicorn_exit()
    if rt._started is None or not rt._started.done():
        await rt.ensure_started()
    return rt


async def shutdown() -> None:
    """Close the current loop's runtime (lifespan shutdown, daphne reactor shutdown)."""
    global _runtime
    rt, _runtime = _runtime, None
    if rt is not None and rt.loop is asyncio.get_running_loop():
        await rt.close()


def _register_daphne_shutdown(rt: Runtime) -> None:
    """Daphne runs on Twisted's asyncio reactor and sends no lifespan events: close the runtime
    from a "before shutdown" trigger so background tasks and pools end cleanly."""
    if "daphne.server" not in sys.modules:
        return
    try:
        from twisted.internet import defer, reactor
    except ImportError:  # pragma: no cover
        return

    def before_shutdown() -> Any:
        return defer.Deferred.fromFuture(asyncio.ensure_future(shutdown(), loop=rt.loop))

    twisted_reactor: Any = reactor
    twisted_reactor.addSystemEventTrigger("before", "shutdown", before_shutdown)


def _hook_uvicorn_exit() -> None:
    """uvicorn waits for open responses to finish before it sends ``lifespan.shutdown``, and an
    SSE stream never finishes by itself: without this a SIGTERM would hang until killed. So chain
    onto uvicorn's SIGINT/SIGTERM handlers: end this worker's streams, then let uvicorn proceed
    (the approach of sse-starlette). Signal handlers can only be set from the main thread."""
    if "uvicorn.server" not in sys.modules or threading.current_thread() is not threading.main_thread():
        return
    for signum in (signal.SIGINT, signal.SIGTERM):
        previous = signal.getsignal(signum)
        if not callable(previous) or getattr(previous, "_mcpsite_hook", False):
            continue

        def handler(number: int, frame: Any, previous: Any = previous) -> None:
            rt = _runtime
            if rt is not None and not rt.loop.is_closed():
                rt.loop.call_soon_threadsafe(stopping.begin, rt)
            previous(number, frame)

        handler._mcpsite_hook = True  # type: ignore[attr-defined]
        signal.signal(signum, handler)
