"""A Sentinel failover while requests flow (issue 15, the Redis client tested like a library):
appends and session loads keep going while the master dies and Sentinel promotes its replica.
Every call ends in bounded time (a result, or ``StoreUnavailable``: a 503), service resumes on
the new master by itself, no entry is written twice, and none acknowledged is lost. (The old
master stops executing writes before it dies, as Redis's own coordinated ``FAILOVER`` does:
Redis replicates asynchronously, and a write acknowledged in a dying master's last milliseconds
could otherwise be lost whatever the client does; such losses are counted apart, "during it".)
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from mcp_protocol.session import Session
from mcp_protocol.store_errors import StoreUnavailable
from mcp_protocol.stores.redis import RedisEventStore, RedisSessionStore
from tests.support.private_redis import have_redis_server
from tests.support.redis_topologies import PrivateSentinel

pytestmark = pytest.mark.timeout(180)
TIMEOUT = 1.0
BOUND = 4 * TIMEOUT + 2.0  # s: connect, a retry on a fresh connection to the new master, slack
STREAMS = 8


@pytest.fixture
def sentinel(tmp_path: Path) -> Iterator[PrivateSentinel]:
    if not have_redis_server():
        pytest.skip("needs redis-server and redis-cli")
    setup = PrivateSentinel(tmp_path).start()
    try:
        yield setup
    finally:
        setup.stop()


async def test_a_sentinel_failover_under_load_loses_and_duplicates_nothing_acknowledged(
    sentinel: PrivateSentinel,
) -> None:
    options: dict[str, Any] = {
        "url": sentinel.url, "mode": "sentinel", "sentinels": sentinel.sentinels,
        "sentinel_master": sentinel.master_name, "prefix": "mcpfailload", "socket_timeout": TIMEOUT,
    }
    # Retention far above what the test appends: every entry must still be there to be counted.
    sessions = RedisSessionStore(**options)
    events = RedisEventStore(block_ms=200, max_events=1_000_000, **options)
    session = Session.create()
    await sessions.create(session)
    acked: dict[int, float] = {}  # n -> when the append was acknowledged
    failed = 0
    slowest = 0.0
    stop = asyncio.Event()

    async def traffic(worker: int) -> None:
        nonlocal failed, slowest
        n = worker
        while not stop.is_set():
            started = time.monotonic()
            try:
                await events.append(session.id, f"s{n % STREAMS}", {"n": n})
                acked[n] = time.monotonic()
                assert await sessions.load(session.id) is not None
            except StoreUnavailable:
                failed += 1
                await asyncio.sleep(0.05)
            slowest = max(slowest, time.monotonic() - started)
            n += 4

    runners = [asyncio.ensure_future(traffic(w)) for w in range(4)]
    try:
        await asyncio.sleep(0.5)
        failover_began = time.monotonic()
        new_master = await asyncio.wait_for(asyncio.to_thread(sentinel.failover, pause_writes=True), 60)
        promoted = time.monotonic()
        before = len(acked)
        while len(acked) < before + 50:  # service resumed on the new master
            assert time.monotonic() - promoted < 20, "no append succeeded after the failover"
            await asyncio.sleep(0.05)
        resumed_after = time.monotonic() - promoted
    finally:
        stop.set()
        await asyncio.wait_for(asyncio.gather(*runners, return_exceptions=True), 30)
    client = redis.Redis(port=new_master)
    stored: Counter[int] = Counter()
    for s in range(STREAMS):
        for _, fields in client.xrange(events._stream(session.id, f"s{s}")):
            stored[json.loads(fields[b"m"])["n"]] += 1
    client.close()
    await events.close()
    await sessions.close()
    twice = sum(1 for v in stored.values() if v > 1)
    lost_early = sum(1 for n, at in acked.items() if at < failover_began and stored[n] == 0)
    lost_late = sum(1 for n, at in acked.items() if at >= failover_began and stored[n] == 0)
    figures = (f"{len(acked)} appends acknowledged, {failed} refused with StoreUnavailable, slowest call "
               f"{slowest:.1f} s; service back {resumed_after:.1f} s after the promotion; {twice} "
               f"duplicated; lost: {lost_early} acknowledged before the failover, {lost_late} during it")
    print(figures)
    assert twice == 0 and lost_early == 0 and lost_late == 0 and slowest <= BOUND, figures
