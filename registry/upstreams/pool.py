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
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import aiohttp
from mcp import ClientSession

from . import sdk_calls, sdk_relay
from .breaker import Breaker
from .connect import CLIENT_INFO, Handshake
from .guard import call_session
from .relay import Relay
from .wire import MAX_RESULT_BYTES, Channel

logger = logging.getLogger(__name__)


Connect = Callable[[Any, Handshake], contextlib.AbstractAsyncContextManager[ClientSession]]
CLIENT_INFO_WIRE = CLIENT_INFO.model_dump(mode="json", exclude_none=True)


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
        return await sdk_calls.request(self.session, method, params, relay, self.calls)

    def completes(self) -> bool:
        """Whether the upstream declared the ``completions`` capability in its handshake."""
        caps = self.session.server_capabilities
        return caps is not None and caps.completions is not None


class Pooled:
    """One upstream's session, cap and breaker on one loop."""

    def __init__(self, config: Any, connect: Connect) -> None:
        self.config = config
        self.connect = connect
        self.slots = asyncio.Semaphore(max(1, int(config.max_concurrency)))
        self.breaker = Breaker(config.name)
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
            handshake = Handshake(calls=sdk_relay.Calls())
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

    def open(self) -> None:
        self._open.add(asyncio.get_running_loop())

    async def close(self) -> None:
        loop = asyncio.get_running_loop()
        self._open.discard(loop)
        pooled = self._loops.pop(loop, {})
        await asyncio.gather(*(p.close() for p in pooled.values()), return_exceptions=True)

    def get(self, config: Any) -> Pooled:
        """This loop's entry for the upstream; a changed configuration (a new snapshot after an
        edit) replaces it, closing the old session in the background."""
        loop = asyncio.get_running_loop()
        pooled = self._loops.setdefault(loop, {})
        entry = pooled.get(config.name)
        if entry is None or entry.config != config:
            if entry is not None:
                closing = loop.create_task(entry.close())
                self._closing.add(closing)
                closing.add_done_callback(self._closing.discard)
            entry = pooled[config.name] = Pooled(config, self.connect)
        return entry

    def entries(self) -> list[Pooled]:
        return [p for loop in self._loops.values() for p in loop.values()]

    @contextlib.asynccontextmanager
    async def lend(self, config: Any) -> AsyncIterator[Pooled]:
        """The pooled entry on a loop a runtime opened; elsewhere (the admin's try-it, a command's
        ``asyncio.run``) a one-shot one, closed on exit: nothing outlives a loop about to end."""
        if asyncio.get_running_loop() in self._open:
            yield self.get(config)
            return
        one_shot = Pooled(config, self.connect)
        try:
            yield one_shot
        finally:
            await one_shot.close()

