"""One live client session per upstream per serving loop, kept between calls (issue 40 item 4).

Opening a session costs an ``initialize`` round trip (and a TLS handshake, an OAuth token): doing
it per call is the 200-500 ms per proxied call other gateways pay. So each worker loop keeps, per
upstream, a ``Live`` session: the official SDK's ``ClientSession`` that made the handshake
(``connect.py``) and the ``wire.Channel`` the calls are sent on (the lean path: plain JSON-RPC POSTs
on one pooled aiohttp session per upstream per loop, ``guard.call_session``, with what the handshake
negotiated; over the legacy HTTP+SSE transport there is no channel and calls go through the SDK
session, ``sdk_calls.py``). The live session is:

- made on first use by a background task that owns the SDK's context managers (anyio's cancel
  scopes must be entered and left in one task: the calling request's task ends long before the
  session does) and waits until asked to close;
- re-made when the upstream says the session is gone (404 → "Session terminated",
  basic/transports.mdx "Session Management": the client MUST start a new session) or the
  connection drops: the call that saw it discards the session, the next call opens a new one
  (a 404 is also retried once at once: the upstream refused the request unprocessed);
- closed on provider stop (``close()``, from ``RegistryProvider.stop``), with the aiohttp session,
  like the http kind's pooled client (``kinds/http_client/clients.py``).

Per upstream, on this loop: a semaphore of ``max_concurrency`` (a call over the cap waits for a
slot within its timeout, then fails) and a circuit breaker (``breaker.py``). Nothing is shared
between upstreams, so a slow or dead one delays only its own calls.

An upstream called *as the user* (``auth`` "user", issue 42 item 3) has one session per (upstream,
principal) instead (``for_user``): made with that caller's token (``Handshake.bearer``), its own
``Mcp-Session-Id``, its own aiohttp session (connections, cookie jar): nothing is shared between
two callers but the upstream's cap and breaker (the upstream's health is everyone's). A session
made with another token than the caller's current one (refreshed, reconnected) is replaced. The
per-user sessions of an upstream on a loop are an LRU bounded by
``REGISTRY_UPSTREAM_USER_SESSIONS`` (the least recently used idle one is closed when a new one
would pass it) and an idle one closes after ``REGISTRY_UPSTREAM_USER_SESSION_IDLE`` seconds, so a
thousand users do not hold a thousand sessions (and tokens in memory) for ever.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import aiohttp
from django.conf import settings

from .breaker import Breaker
from .guard import call_session
from .handshake import CLIENT_INFO_WIRE, Handshake
from .relay import Relay
from .wire import MAX_RESULT_BYTES, Channel

if TYPE_CHECKING:  # the SDK is imported with the first session (handshake.py says why)
    from mcp import ClientSession

    from . import sdk_relay

logger = logging.getLogger(__name__)


DEFAULT_USER_SESSIONS = 256  # per-user sessions of one upstream on one worker loop
DEFAULT_USER_SESSION_IDLE = 300.0  # s: a per-user session unused this long is closed

Connect = Callable[[Any, Handshake], "contextlib.AbstractAsyncContextManager[ClientSession]"]


def default_connect(config: Any, handshake: Handshake
                    ) -> contextlib.AbstractAsyncContextManager[ClientSession]:
    from .connect import connect  # transport fallback, auth, guard

    return connect(config, handshake)


@dataclass(frozen=True, slots=True)
class Live:
    """A session with an upstream: the SDK's (the handshake) and the channel calls go on."""

    session: ClientSession
    channel: Channel | None  # None: the legacy HTTP+SSE transport, calls through the SDK session
    calls: sdk_relay.Calls | None = None  # the legacy session's calls in flight (sdk_relay.py)

    async def request(self, method: str, params: dict[str, Any], relay: Relay) -> dict[str, Any]:
        if method == "completion/complete" and not self.completes():
            # Not advertised (server/utilities/completion.mdx: servers that support completions
            # MUST declare the capability): nothing to suggest, and nothing asked of it.
            return {"completion": {"values": [], "hasMore": False}}
        if self.channel is not None:
            return await self.channel.request(method, params, relay)
        from . import sdk_calls  # the legacy transport's calls: the SDK is loaded by now

        return await sdk_calls.request(self.session, method, params, relay, self.calls)

    def completes(self) -> bool:
        """Whether the upstream declared the ``completions`` capability in its handshake."""
        caps = self.session.server_capabilities
        return caps is not None and caps.completions is not None


class Pooled:
    """One upstream's session, cap and breaker on one loop."""

    def __init__(self, config: Any, connect: Connect, *, shared: Pooled | None = None,
                 bearer: str | None = None) -> None:
        self.config = config
        self.connect = connect
        # A per-user session shares its upstream's cap and breaker (``shared``), nothing else.
        cap = max(1, int(config.max_concurrency))
        self.slots: asyncio.Semaphore = shared.slots if shared is not None else asyncio.Semaphore(cap)
        self.breaker: Breaker = shared.breaker if shared is not None else Breaker(config.name)
        self.bearer = bearer  # the caller's token (a per-user session), else None: the upstream's auth
        self.last_used = time.monotonic()
        self.busy = 0  # calls using it now: never closed under them by the LRU or the idle sweep
        self.retired = False  # replaced while busy: closed when its last call ends
        self._ready: asyncio.Future[Live] | None = None
        self._owner: asyncio.Task[None] | None = None
        self._release: asyncio.Event | None = None
        self._http: aiohttp.ClientSession | None = None

    def http(self) -> aiohttp.ClientSession:
        """This upstream's pooled aiohttp session on this loop, made on first use."""
        if self._http is None or self._http.closed:
            self._http = call_session(self.config)
        return self._http

    async def session(self) -> Live:
        """The live session, opened now if there is none (concurrent callers share one opening)."""
        if self._ready is None or (self._ready.done() and self._ready.exception() is not None):
            loop = asyncio.get_running_loop()
            self._ready = ready = loop.create_future()
            self._release = asyncio.Event()
            owner = self._own(ready, self._release)
            self._owner = loop.create_task(owner, name=f"upstream {self.config.name}")
        return await asyncio.shield(self._ready)

    async def _own(self, ready: asyncio.Future[Live], release: asyncio.Event) -> None:
        try:
            from .sdk_relay import Calls  # the official SDK, loaded with the first session

            handshake = Handshake(bearer=self.bearer, calls=Calls())
            async with self.connect(self.config, handshake) as session:
                channel = None
                if not handshake.sse:
                    channel = Channel(self.config.url, self.http(), session.protocol_version or "2025-11-25",
                                      handshake.session_id, CLIENT_INFO_WIRE, handshake.headers,
                                      MAX_RESULT_BYTES)
                    if not channel.modern:
                        # The SDK may return before its notifications/initialized POST is answered,
                        # and the channel's first call must not overtake it (lifecycle.mdx: the
                        # initialized notification comes first; server-everything registers its
                        # capability-gated tools on it). The SDK sends one message after another:
                        # a ping answered means the notification was delivered.
                        with contextlib.suppress(Exception):  # a server without ping: nothing lost
                            await session.send_ping()
                ready.set_result(Live(session, channel, handshake.calls if channel is None else None))
                await release.wait()
        except BaseException as exc:  # the transport died, or connecting failed: the next call re-opens
            if not ready.done():
                ready.set_exception(exc if isinstance(exc, Exception) else ConnectionError(repr(exc)))
                ready.exception()  # retrieved: a failed opening nobody awaited is not logged as lost
            elif not isinstance(exc, asyncio.CancelledError):
                logger.info("upstream %s: session ended: %r", self.config.name, exc)
            if isinstance(exc, asyncio.CancelledError):
                raise
        finally:
            if self._ready is ready:
                self._ready = None

    def discard(self, session: Live | None = None) -> None:
        """Forget the session (expired, or its connection dropped); its owner closes it."""
        ready = self._ready
        if ready is None:
            return
        if session is not None and not (ready.done() and not ready.exception() and ready.result() is session):
            return  # already replaced: another call re-made it
        self._ready = None
        if self._release is not None:
            self._release.set()

    async def close(self) -> None:
        self._ready = None
        owner, self._owner = self._owner, None
        if self._release is not None:
            self._release.set()
        if owner is not None and not owner.done():
            try:
                await asyncio.wait_for(owner, 5.0)
            except Exception:  # TimeoutError included: the owner is stuck closing
                owner.cancel()
        http, self._http = self._http, None
        if http is not None:
            await http.close()


class UpstreamSessions:
    """The pooled sessions of every upstream, per serving loop (held by the provider)."""

    def __init__(self, connect: Connect | None = None) -> None:
        self.connect = connect or default_connect
        self._loops: dict[asyncio.AbstractEventLoop, dict[str, Pooled]] = {}
        self._open: set[asyncio.AbstractEventLoop] = set()
        self._closing: set[asyncio.Task[None]] = set()  # replaced entries closing (kept: not collected)
        # Per-user sessions: loop → upstream name → principal → entry, least recently used first.
        self._users: dict[asyncio.AbstractEventLoop, dict[str, OrderedDict[str, Pooled]]] = {}
        self._sweeps: dict[asyncio.AbstractEventLoop, asyncio.TimerHandle] = {}

    def open(self) -> None:
        self._open.add(asyncio.get_running_loop())

    async def close(self) -> None:
        loop = asyncio.get_running_loop()
        self._open.discard(loop)
        pooled = list(self._loops.pop(loop, {}).values())
        pooled += [p for users in self._users.pop(loop, {}).values() for p in users.values()]
        sweep = self._sweeps.pop(loop, None)
        if sweep is not None:
            sweep.cancel()
        await asyncio.gather(*(p.close() for p in pooled), return_exceptions=True)

    def get(self, config: Any) -> Pooled:
        """This loop's entry for the upstream; a changed configuration (a new snapshot after an
        edit) replaces it, closing the old session in the background."""
        loop = asyncio.get_running_loop()
        pooled = self._loops.setdefault(loop, {})
        entry = pooled.get(config.name)
        if entry is None or entry.config != config:
            if entry is not None:
                self._close_later(entry)
                for stale in self._users.get(loop, {}).pop(config.name, {}).values():
                    self._close_later(stale)  # made with the old configuration
            entry = pooled[config.name] = Pooled(config, self.connect)
        return entry

    def _close_later(self, entry: Pooled) -> None:
        closing = asyncio.get_running_loop().create_task(entry.close())
        self._closing.add(closing)
        closing.add_done_callback(self._closing.discard)

    def for_user(self, config: Any, principal: str, token: str) -> Pooled:
        """This loop's session of ``principal`` with the upstream, made with ``token``: a session
        made with another token (the user's was refreshed or reconnected) is closed and replaced."""
        loop = asyncio.get_running_loop()
        shared = self.get(config)
        users = self._users.setdefault(loop, {}).setdefault(config.name, OrderedDict())
        entry = users.get(principal)
        if entry is not None and (entry.config != config or entry.bearer != token):
            del users[principal]
            self._retire(entry)  # a call still running with the old token finishes on it
            entry = None
        if entry is None:
            entry = users[principal] = Pooled(config, self.connect, shared=shared, bearer=token)
            self._evict(users, user_sessions_cap(), keep=principal)
            self._schedule_sweep(loop)
        users.move_to_end(principal)
        entry.last_used = time.monotonic()
        return entry

    def _retire(self, entry: Pooled) -> None:
        if entry.busy:
            entry.retired = True
        else:
            self._close_later(entry)

    def _evict(self, users: OrderedDict[str, Pooled], cap: int, keep: str) -> None:
        """Close the least recently used idle sessions past ``cap`` (one in use stays: closing it
        would fail its call; the pool is over the cap only while they all are busy)."""
        for principal in list(users):
            if len(users) <= cap:
                return
            entry = users[principal]
            if entry.busy == 0 and principal != keep:
                del users[principal]
                self._close_later(entry)

    def _schedule_sweep(self, loop: asyncio.AbstractEventLoop) -> None:
        if loop in self._sweeps or loop not in self._open:
            return
        self._sweeps[loop] = loop.call_later(user_session_idle(), self._sweep, loop)

    def _sweep(self, loop: asyncio.AbstractEventLoop) -> None:
        """Close the per-user sessions idle longer than the setting; again later while any remain."""
        self._sweeps.pop(loop, None)
        idle = user_session_idle()
        cutoff = time.monotonic() - idle
        remaining = False
        for users in self._users.get(loop, {}).values():
            for principal, entry in list(users.items()):
                if entry.busy == 0 and entry.last_used <= cutoff:
                    del users[principal]
                    self._close_later(entry)
                else:
                    remaining = True
        if remaining:
            self._sweeps[loop] = loop.call_later(idle, self._sweep, loop)

    def user_entries(self, name: str) -> list[Pooled]:
        """The per-user sessions of upstream ``name`` on every loop (tests, the admin)."""
        return [p for loop in self._users.values() for p in loop.get(name, {}).values()]

    def entries(self) -> list[Pooled]:
        return [p for loop in self._loops.values() for p in loop.values()]

    @contextlib.asynccontextmanager
    async def lend(self, config: Any, user: tuple[str, str] | None = None) -> AsyncIterator[Pooled]:
        """The pooled entry on a loop a runtime opened; elsewhere (the admin's try-it, a command's
        ``asyncio.run``) a one-shot one, closed on exit: nothing outlives a loop about to end.
        ``user``: (principal, token), that caller's own session (``for_user``)."""
        if asyncio.get_running_loop() in self._open:
            if user is None:
                yield self.get(config)
                return
            entry = self.for_user(config, *user)
            entry.busy += 1
            try:
                yield entry
            finally:
                entry.busy -= 1
                entry.last_used = time.monotonic()
                if entry.retired and entry.busy == 0:
                    self._close_later(entry)
            return
        one_shot = Pooled(config, self.connect, bearer=None if user is None else user[1])
        try:
            yield one_shot
        finally:
            await one_shot.close()


def user_sessions_cap() -> int:
    return max(1, int(getattr(settings, "REGISTRY_UPSTREAM_USER_SESSIONS", DEFAULT_USER_SESSIONS)))


def user_session_idle() -> float:
    idle = getattr(settings, "REGISTRY_UPSTREAM_USER_SESSION_IDLE", DEFAULT_USER_SESSION_IDLE)
    return max(1.0, float(idle))

