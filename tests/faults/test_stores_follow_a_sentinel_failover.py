"""Sentinel failover: the master dies, Sentinel promotes its replica, and every store and the bus
carry on against the new master by themselves (asking Sentinel on reconnect), with no restart
and nothing kept aside in memory meanwhile (product.md "State across workers"; issue 5, build 6).

Runs against a private master, its replica and one Sentinel (tests/support/redis_topologies.py),
started for this test only: the failover leaves them changed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from mcp_protocol.session import Session
from mcp_protocol.store_errors import StoreUnavailable
from mcp_protocol.stores.claims import Claim
from tests.support.polling import eventually, within
from tests.support.private_redis import have_redis_server
from tests.support.redis_topologies import PrivateSentinel
from tests.support.redis_workers import before_the_fault, carries_on, redis_workers
from tests.support.subscriptions import anext_event

pytestmark = pytest.mark.skipif(not have_redis_server(), reason="needs redis-server")


@pytest.fixture
def sentinel(tmp_path: Path) -> Iterator[PrivateSentinel]:
    setup = PrivateSentinel(tmp_path).start()
    try:
        yield setup
    finally:
        setup.stop()


async def test_stores_and_bus_follow_a_sentinel_failover_to_the_new_master(sentinel: PrivateSentinel) -> None:
    options: dict[str, Any] = {
        "url": sentinel.url,
        "mode": "sentinel",
        "sentinels": sentinel.sentinels,
        "sentinel_master": sentinel.master_name,
        "prefix": "failover",
        "socket_timeout": 1.0,
    }
    async with redis_workers(**options) as workers:
        sessions, events = workers.sessions, workers.events
        before = await before_the_fault(workers)
        session = before.session

        new_master = await within(asyncio.to_thread(sentinel.failover), 30.0)

        # The reader on the dead master ends (the SSE stream would close; the client resumes).
        with pytest.raises(StoreUnavailable):
            await within(before.blocked, 10.0)

        async def served_again() -> bool:
            try:
                return await sessions.load(session.id) is not None
            except StoreUnavailable:  # until Sentinel reports the new master as up
                return False

        await eventually(served_again, seconds=15.0, step=0.1)
        # What was written before the failover (replicated) is served; new writes land on the
        # new master: the hot-path connection and redis-py's pool both asked Sentinel again.
        fresh = Session.create("bob")
        await sessions.create(fresh)
        fresh.log_level = "debug"
        await sessions.save(fresh)
        assert (await sessions.load(fresh.id)) == fresh
        after = await events.append(session.id, "r1", {"n": 1})
        resumed = events.listen(session.id, "r1", after=before.first_event)
        assert (await within(anext_event(resumed))).id == after
        assert await events.claims.claim_once("k", 5) is Claim.WON
        assert await events.claims.claim_stream(session.id, "w", 5)
        direct = redis.Redis(port=new_master, decode_responses=True)
        try:
            assert direct.exists(f"failover:session:{{{fresh.id}}}") == 1
        finally:
            direct.close()

        # The subscription made before the failover carries on once redis-py re-subscribed on
        # the new master.
        await carries_on(before.sub, workers.other_worker, seconds=15.0)
        await before.sub.close()
