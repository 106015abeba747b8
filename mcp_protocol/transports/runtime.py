"""The objects the HTTP endpoint serves with on one event loop, built with their dependencies.

Owns: the ``Server``, the stores, bus and provider it is handed, the session channels
(server→client requests awaiting answers, cancels from other workers: ``pending.py``), the registry
of live SSE streams per session (so DELETE closes them on this worker at once), and the
``changes`` listener (``fanout/``). Nothing here reads settings: whoever builds a ``Runtime``
(the Django adapter, ``mcp_django/service.py``; a test; a bench script) passes every dependency
in, each built with what it needs (no attribute of theirs is written here). It runs inside
``async with runtime.run():``, the one way to start it, as the official Python SDK runs its
``StreamableHTTPSessionManager``; ``host.py`` does that per event loop, and the Django adapter
(``mcp_django/servers.py``) from the ASGI server's own start and stop (uvicorn's lifespan,
daphne's reactor).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from ..auth.limits import InFlight
from ..auth.policy import AccessPolicy
from ..bus.base import Bus
from ..endpoint_servers import EndpointServers
from ..endpoints import EndpointSpec
from ..fanout import Fanout
from ..jsonrpc import notification
from ..provider import Provider
from ..server import Server
from ..session import Session
from ..store_errors import StoreUnavailable
from ..stores.events import STANDALONE_STREAM, EventStore
from ..stores.sessions import SessionStore
from . import auth, metrics
from .auth import PrincipalResolver
from .pending import PendingRequests
from .request_leases import RequestLeases
from .security import OriginGuard
from .standalone import StandaloneOutbound
from .timer_wheel import TimerWheel
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
    metrics: bool = False  # Prometheus counters per request (the adapter reads MCP_METRICS)
    shutdown_grace: float = 10.0  # s: in-flight requests may finish this long after SIGTERM


class Runtime:
    """Built with its collaborators, which it wires nothing into: the server comes with its
    interceptor and tracing, the task runner with its hooks (``task_status_writer``), the access
    policy with its audit's drop counter. ``async with runtime.run():`` is the one way to run it:
    it starts the provider snapshot, the access policy (key ring, audit queue), the ``changes``
    subscription and the task runner, and at the end stops them and closes what it made (fan-out,
    session channels). The stores and bus it is handed are not its to close: whoever built them
    does (``mcp_django/service.py``). ``resolve_principal`` None: who calls is what ``access``
    says (``MCP_AUTH``; open mode lets everyone in as anonymous)."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        *,
        config: TransportConfig,
        provider: Provider,
        sessions: SessionStore,
        events: EventStore,
        bus: Bus,
        server: Server,
        access: AccessPolicy,
        guard: OriginGuard,
        resolve_principal: PrincipalResolver | None = None,
    ) -> None:
        self.loop = loop
        self.config = config
        self.provider, self.sessions, self.events, self.bus = provider, sessions, events, bus
        self.server = server
        self.access = access
        self.pending = PendingRequests(
            self.bus, on_cancel=self.server.cancel, on_session_end=self.session_ended)
        self.guard = guard
        self.resolve_principal: PrincipalResolver = resolve_principal or auth.resolver(self.access)
        self.fanout = Fanout(self.provider, self.sessions, self.events, self.bus,
                             on_message=metrics.on_bus_message if self.config.metrics else None,
                             feed=self.server.feed)
        self.leases = RequestLeases(self.events)
        # GET streams open on this worker per principal, resumes included (get_stream.py).
        self.open_streams = InFlight(getattr(self.sessions, "max_sessions_per_principal", None))
        self.stopping = False  # told to stop (SIGTERM): see stopping.py
        self.later = TimerWheel()  # the request path's "still running in 0.1 s?" timers
        self._live: dict[str, list[EndSignal]] = {}
        self.ready = False
        # The virtual servers' views of this runtime (``/mcp/<slug>``: transports/endpoints.py).
        self.endpoint_runtimes = EndpointRuntimes(self)

    # -- start / stop ---------------------------------------------------------------------------
    @contextlib.asynccontextmanager
    async def run(self) -> AsyncIterator[Runtime]:
        """Serve from entering to leaving (the SDK's ``StreamableHTTPSessionManager.run``). A start
        that fails leaves nothing running, and ``run()`` may be entered again later."""
        await self._start()
        try:
            yield self
        finally:
            await self._stop()

    async def _start(self) -> None:
        started: list[Callable[[], Awaitable[None]]] = []
        try:
            await self.provider.refresh()
            await self.access.start(on_revoke=self.principals_revoked)
            started.append(self.access.close)
            await self.fanout.start()
            started.append(self.fanout.stop)
            if self.server.tasks is not None:
                await self.server.tasks.start()
                started.append(self.server.tasks.close)
            # After the fan-out subscribed: what the provider publishes reaches it.
            await self.provider.start(self.bus)
        except BaseException:
            for stop in reversed(started):
                with contextlib.suppress(Exception):
                    await stop()
            raise
        self.ready = True

    async def _stop(self) -> None:
        self.ready = False
        self.server.feed.close()
        for group in self._live.values():
            for ended in group:
                ended.set()
        await self.fanout.stop()
        if self.server.tasks is not None:
            await self.server.tasks.close(self.config.shutdown_grace)  # runs drain (tasks/drain.py)
        await self.pending.close()
        with contextlib.suppress(Exception):
            await self.provider.stop()
        with contextlib.suppress(Exception):
            await self.access.close()
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

    async def principals_revoked(self, principals: set[str]) -> None:
        """Their keys stopped working (revoked, deleted, expired; every worker's key ring tells it
        within its reload time): their listen streams end here, their unfinished tasks are
        cancelled (stopped wherever they run), and their sessions everywhere,
        each deleted and its streams and requests ended here at once and on the other workers
        through the bus (``end_session``). A later heartbeat could not keep one alive."""
        self.server.feed.end_for(principals)
        if self.server.tasks is not None:
            try:
                await self.server.tasks.cancel_all_of(principals)
            except StoreUnavailable:
                logger.warning("could not cancel the tasks of revoked principals: the task store is down")
        for principal in sorted(principals):
            for session_id in await self.sessions.principal_session_ids(principal):
                await self.end_session(session_id)

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


class EndpointRuntime(Runtime):
    """``base`` as a virtual server (``/mcp/<slug>``) serves with it: the same stores, bus,
    fan-out, session channels and live streams (every attribute not set here is read from
    ``base``), with the endpoint's own core ``server`` (``endpoint_servers.py``), which shares
    ``base.server``'s in-flight table, change feed and task runner. Never started or stopped
    itself: ``base`` is. Only requests on a virtual server pay its indirection."""

    def __init__(self, base: Runtime, server: Server) -> None:  # no super(): base holds the state
        self._base = base
        self.server = server

    def __getattr__(self, name: str) -> Any:
        return getattr(self._base, name)


class EndpointRuntimes:
    """A ``Runtime``'s views per virtual server: one per spec, made on first use, bounded."""

    def __init__(self, base: Runtime, limit: int = 1024) -> None:
        self.base = base
        self.servers = EndpointServers(base.server, limit)
        self._views: dict[str, EndpointRuntime] = {}

    def get(self, spec: EndpointSpec) -> EndpointRuntime:
        server = self.servers.get(spec)  # the same Server while the spec is unchanged
        view = self._views.get(spec.slug)
        if view is None or view.server is not server:
            if view is None and len(self._views) >= self.servers.limit:
                del self._views[next(iter(self._views))]
            view = self._views[spec.slug] = EndpointRuntime(self.base, server)
        return view


def task_status_writer(events: EventStore) -> Callable[[str, dict[str, Any]], Awaitable[None]]:
    """The task runner's ``legacy_status``: 2025-11-25 notifications/tasks/status on the
    session's GET stream, through its standalone log (which any worker's stream reads)."""

    async def write(session_id: str, task: dict[str, Any]) -> None:
        message = notification("notifications/tasks/status", task)
        await events.append(session_id, STANDALONE_STREAM, message)

    return write


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
