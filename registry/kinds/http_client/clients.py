"""One pooled ``aiohttp.ClientSession`` per serving event loop.

Building an HTTP client (its SSL context above all) for every call cost ~24 ms of CPU per call
and capped a worker at ~30 http tool calls/s (issue 29); a session kept for the worker's life
reuses its keep-alive connections. A session belongs to the event loop that made it (its
connections are that loop's transports), and one process-wide provider may serve several loops
(tests, daphne's reactor beside a management command), so sessions are kept per loop:

- ``open()`` makes the running loop's session; the runtime calls it when it starts on a loop
  (``Provider.start``), ``close()`` closes it when the runtime closes (``Provider.stop``);
- ``session()`` lends the running loop's pooled session, or, on a loop no runtime opened (the
  admin's "try it", a management command, a test's ``asyncio.run``), a one-shot session closed
  at once: nothing is left behind on a loop that is about to end.

The connector bounds connections in all and per host (``REGISTRY_HTTP_MAX_CONNECTIONS``,
``..._PER_HOST``: one slow API cannot take the pool), keeps idle ones alive
``REGISTRY_HTTP_KEEPALIVE_SECONDS`` and resolves names through ``guard.public_only_resolver()``.
``limit(tool, cap)`` is a tool's concurrency cap on this loop (``Tool.http_max_concurrency``):
calls beyond it wait for a slot, within their deadline. It is per worker loop, like the pool: a
fleet of N workers lets N times cap calls of a tool run at once. The environment's proxy settings
are ignored (``trust_env=False``: a proxy would see every secret header); redirects are refused per
request.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import aiohttp

from . import config, guard


def build_session() -> aiohttp.ClientSession:
    connector = aiohttp.TCPConnector(
        limit=int(config.get("REGISTRY_HTTP_MAX_CONNECTIONS")),
        limit_per_host=int(config.get("REGISTRY_HTTP_MAX_CONNECTIONS_PER_HOST")),
        keepalive_timeout=float(config.get("REGISTRY_HTTP_KEEPALIVE_SECONDS")),
        resolver=guard.public_only_resolver(),
    )
    # No aiohttp timeout: the caller bounds the whole call with asyncio.timeout (kinds/http.py).
    return aiohttp.ClientSession(
        connector=connector,
        timeout=aiohttp.ClientTimeout(total=None),
        trust_env=False,
        auto_decompress=True,
    )


class UpstreamClients:
    def __init__(self) -> None:
        self._sessions: dict[asyncio.AbstractEventLoop, aiohttp.ClientSession] = {}
        self._limits: dict[asyncio.AbstractEventLoop, dict[str, tuple[int, asyncio.Semaphore]]] = {}

    def open(self) -> None:
        """The running loop's pooled session, made now if it has none."""
        loop = asyncio.get_running_loop()
        if loop not in self._sessions:
            self._sessions[loop] = build_session()

    async def close(self) -> None:
        """Close the running loop's pooled session (its keep-alive connections) if it has one."""
        self._limits.pop(asyncio.get_running_loop(), None)
        session = self._sessions.pop(asyncio.get_running_loop(), None)
        if session is not None:
            await session.close()

    def limit(self, tool: str, cap: int | None) -> contextlib.AbstractAsyncContextManager[object]:
        """A slot among ``cap`` for ``tool`` on this loop (no cap: no wait). On a loop no runtime
        opened (one call at a time: the admin's try-it, a command) there is nothing to share."""
        loop = asyncio.get_running_loop()
        if cap is None or loop not in self._sessions:
            return contextlib.nullcontext()
        limits = self._limits.setdefault(loop, {})
        held = limits.get(tool)
        if held is None or held[0] != cap:  # new, or the row's cap changed
            held = limits[tool] = (cap, asyncio.Semaphore(cap))
        return held[1]

    def pooled(self) -> aiohttp.ClientSession | None:
        """The running loop's pooled session, if a runtime opened one."""
        return self._sessions.get(asyncio.get_running_loop())

    @contextlib.asynccontextmanager
    async def session(self) -> AsyncIterator[aiohttp.ClientSession]:
        """The running loop's pooled session, or a one-shot one closed on exit."""
        session = self._sessions.get(asyncio.get_running_loop())
        if session is not None:
            yield session
            return
        async with build_session() as one_shot:
            yield one_shot
