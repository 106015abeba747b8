"""Our Redis client tested like a library (issue 15): a Redis that accepts connections and never
answers, and a connection dropped in the middle of a pipeline's replies. Every store and bus
call is bounded in time (it fails with ``StoreUnavailable``, never hangs), and a dropped pipeline
never writes an entry twice (no blind resend of what may have run).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
import redis

from mcp_protocol.bus.redis import RedisBus
from mcp_protocol.session import Session
from mcp_protocol.store_errors import StoreUnavailable
from mcp_protocol.stores.events import STANDALONE_STREAM
from mcp_protocol.stores.redis import RedisEventStore, RedisSessionStore
from tests.support.private_redis import PrivateRedis, have_redis_server

pytestmark = pytest.mark.timeout(120)
TIMEOUT = 1.0  # s: the stores' socket timeout in these tests
BOUND = 3 * TIMEOUT + 1.0  # connect + one retry on a fresh connection + slack


@contextlib.asynccontextmanager
async def silent_redis() -> AsyncIterator[str]:
    """A TCP server that accepts, reads everything and never answers."""
    held: list[asyncio.StreamWriter] = []

    async def swallow(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held.append(writer)
        while await reader.read(65536):
            pass

    server = await asyncio.start_server(swallow, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        server.close()
        for writer in held:
            writer.close()


async def bounded(name: str, call: Callable[[], Awaitable[Any]], timings: dict[str, float]) -> None:
    started = time.monotonic()
    with pytest.raises((StoreUnavailable, redis.exceptions.RedisError, TimeoutError, OSError)):
        async with asyncio.timeout(BOUND * 3):  # the test's own guard: a hang fails, not blocks
            await call()
    timings[name] = time.monotonic() - started


async def test_a_redis_that_never_answers_fails_every_call_within_a_bound() -> None:
    timings: dict[str, float] = {}
    async with silent_redis() as url:
        options = {"url": url, "prefix": "mcpsilent", "socket_timeout": TIMEOUT}
        sessions = RedisSessionStore(**options)
        events = RedisEventStore(**options, block_ms=500)
        bus = RedisBus(**options)
        session = Session.create()
        calls: dict[str, Callable[[], Awaitable[Any]]] = {
            "sessions.create": lambda: sessions.create(session),
            "sessions.load": lambda: sessions.load(session.id),
            "sessions.save": lambda: sessions.save(session),
            "sessions.delete": lambda: sessions.delete(session.id),
            "sessions.count": lambda: sessions.count(),
            "claims.claim_stream": lambda: events.claims.claim_stream(session.id, "o", 5.0),
            "events.append": lambda: events.append(session.id, "s", {"n": 1}),
            "events.broadcast": lambda: events.broadcast([session.id], STANDALONE_STREAM, {"n": 1}),
            "events.listen": lambda: anext(events.listen(session.id, "s")),
            "claims.claim_once": lambda: events.claims.claim_once("job", 5.0),
            "bus.publish": lambda: bus.publish("changes", {"id": "x"}),
        }
        try:
            for name, call in calls.items():
                await bounded(name, call, timings)
        finally:
            for closing in (sessions, events, bus):
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(closing.close(), 5)
    slowest = max(timings, key=timings.__getitem__)
    figures = ", ".join(f"{k} {v:.1f} s" for k, v in timings.items())
    print(f"a Redis that never answers: {figures}")
    assert timings[slowest] <= BOUND, f"{slowest}: {timings[slowest]:.1f} s, bound {BOUND:.0f} s ({figures})"


class DroppingProxy:
    """Forwards to a real Redis; after ``drop_after`` reply bytes it closes both sides, once."""

    def __init__(self, upstream_port: int, drop_after: int) -> None:
        self.upstream_port, self.drop_after = upstream_port, drop_after
        self.dropped = 0
        self.server: asyncio.Server | None = None

    async def start(self) -> str:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return f"redis://127.0.0.1:{self.server.sockets[0].getsockname()[1]}/0"

    async def _serve(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        up_r, up_w = await asyncio.open_connection("127.0.0.1", self.upstream_port)
        budget = self.drop_after if not self.dropped else None

        async def requests() -> None:
            while data := await client_r.read(65536):
                up_w.write(data)
                await up_w.drain()

        async def replies() -> None:
            nonlocal budget
            while data := await up_r.read(65536):
                if budget is not None and len(data) >= budget:
                    client_w.write(data[:budget])  # part of the pipeline's replies, then gone
                    await client_w.drain()
                    self.dropped += 1
                    return
                if budget is not None:
                    budget -= len(data)
                client_w.write(data)
                await client_w.drain()

        tasks = [asyncio.ensure_future(requests()), asyncio.ensure_future(replies())]
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        for task in tasks:
            task.cancel()
        for writer in (client_w, up_w):
            writer.close()

    def close(self) -> None:
        if self.server is not None:
            self.server.close()


async def test_a_connection_dropped_mid_pipeline_writes_nothing_twice(tmp_path: Path) -> None:
    if not have_redis_server():
        pytest.skip("needs redis-server and redis-cli")
    upstream = PrivateRedis(tmp_path).start()
    proxy = DroppingProxy(upstream.port, drop_after=2000)
    try:
        url = await proxy.start()
        events = RedisEventStore(url=url, prefix="mcpdrop", socket_timeout=TIMEOUT, block_ms=500)
        sessions = [f"s{n}" for n in range(600)]
        outcomes: Counter[str] = Counter()
        for round_ in range(3):  # the first round's connection is cut partway through its replies
            started = time.monotonic()
            try:
                await events.broadcast(sessions, STANDALONE_STREAM, {"round": round_})
                outcomes["written"] += 1
            except StoreUnavailable:
                outcomes["failed"] += 1
            assert time.monotonic() - started <= BOUND, f"round {round_} took too long"
        await events.close()
        client = redis.Redis(port=upstream.port)
        per_session: list[Counter[str]] = []
        for sid in sessions:
            key = events._stream(sid, STANDALONE_STREAM)
            per_session.append(Counter(f[b"m"].decode() for _, f in client.xrange(key) if b"m" in f))
        client.close()
        twice = sum(1 for c in per_session for n in c.values() if n > 1)
        # The rounds that returned normally reached every session (nothing lost).
        missing = sum(1 for c in per_session for r in range(1, 3) if c[json.dumps({"round": r})] != 1)
        figures = (f"{proxy.dropped} connection(s) cut mid-pipeline; broadcasts {dict(outcomes)}; "
                   f"{twice} entries twice, {missing} missing from the completed broadcasts")
        print(figures)
        assert proxy.dropped >= 1 and twice == 0 and missing == 0, figures
        assert outcomes["written"] >= 2, figures  # the rounds after the drop went through
    finally:
        proxy.close()
        upstream.stop()
