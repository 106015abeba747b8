"""Redis down, then back: every store and bus operation fails with ``StoreUnavailable`` (the
transport's 503), nothing is kept aside in memory, and the same instances work again once Redis
returns, without a restart (product.md "State across workers").

Runs against a private redis-server started on a free port (never the shared one), stopped with
SHUTDOWN NOSAVE and started again on the same port.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from mcp_protocol.bus.base import RESYNC
from mcp_protocol.session import Session
from mcp_protocol.store_errors import StoreUnavailable
from mcp_protocol.stores.claims import Claim
from tests.support.polling import eventually, within
from tests.support.private_redis import PrivateRedis, have_redis_server
from tests.support.redis_workers import before_the_fault, carries_on, redis_workers
from tests.support.subscriptions import anext_event, anext_message

pytestmark = pytest.mark.skipif(not have_redis_server(), reason="needs redis-server")


@pytest.fixture
def private_redis(tmp_path: Path) -> Iterator[PrivateRedis]:
    server = PrivateRedis(tmp_path)
    server.start()
    try:
        yield server
    finally:
        if server.ping():
            server.stop()


async def raises_unavailable(op: Callable[[], Awaitable[Any]]) -> None:
    with pytest.raises(StoreUnavailable):
        await within(op(), 10.0)


async def test_redis_outage_gives_store_unavailable_and_service_resumes_by_itself(
    private_redis: PrivateRedis,
) -> None:
    async with redis_workers(url=private_redis.url, prefix="outage", socket_timeout=1.0) as workers:
        sessions, events, other_worker = workers.sessions, workers.events, workers.other_worker
        before = await before_the_fault(workers)
        session = before.session

        private_redis.stop()

        with pytest.raises(StoreUnavailable):
            await within(before.blocked, 10.0)  # the listen waiting in XREAD when Redis died
        await raises_unavailable(lambda: sessions.create(Session.create()))
        await raises_unavailable(lambda: sessions.load(session.id))
        await raises_unavailable(lambda: sessions.save(session))
        await raises_unavailable(lambda: sessions.delete(session.id))
        await raises_unavailable(lambda: sessions.list_sessions())
        await raises_unavailable(lambda: sessions.count())
        await raises_unavailable(lambda: sessions.session_ids())
        await raises_unavailable(lambda: sessions.subscribers("file:///a"))
        await raises_unavailable(lambda: events.claims.claim_stream(session.id, "w", 5))
        await raises_unavailable(lambda: events.claims.refresh_stream(session.id, "w", 5))
        await raises_unavailable(lambda: events.claims.release_stream(session.id, "w"))
        await raises_unavailable(lambda: events.append(session.id, "r1", {"n": 1}))
        await raises_unavailable(lambda: anext_event(events.listen(session.id, "r1")))
        await raises_unavailable(lambda: events.delete_session(session.id))
        await raises_unavailable(lambda: events.claims.claim_once("k", 5))
        await raises_unavailable(lambda: other_worker.publish("changes", {"n": "lost"}))
        await raises_unavailable(lambda: other_worker.subscribe("elsewhere"))
        with pytest.raises(StoreUnavailable):
            await within(asyncio.to_thread(other_worker.publish_sync, "changes", {"n": "lost"}))

        private_redis.start()  # empty: --save "" kept nothing

        async def sessions_back() -> bool:
            try:
                return await sessions.load(session.id) is None
            except StoreUnavailable:
                return False

        await eventually(sessions_back, seconds=10.0, step=0.1)
        fresh = Session.create("alice")
        await sessions.create(fresh)
        assert await sessions.load(fresh.id) == fresh
        new_id = await events.append(fresh.id, "r1", {"n": 1})
        assert (await within(anext_event(events.listen(fresh.id, "r1")))).id == new_id
        assert await events.claims.claim_once("k", 5) is Claim.WON

        # The subscription made before the outage carries on once redis-py re-subscribed, and
        # first says it may have missed messages (RESYNC: a worker then rebuilds its snapshot).
        seen = await carries_on(before.sub, other_worker, seconds=10.0)
        assert seen[0] == RESYNC
        # A SUBSCRIBE that failed during the outage does not jam the channel afterwards.
        elsewhere = await within(other_worker.subscribe("elsewhere"))
        await workers.bus.publish("elsewhere", {"n": "elsewhere"})
        assert await within(anext_message(elsewhere)) == {"n": "elsewhere"}
        await elsewhere.close()
        await before.sub.close()
