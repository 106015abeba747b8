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

from mcp_protocol.bus.base import RESYNC, Subscription
from mcp_protocol.bus.redis import RedisBus
from mcp_protocol.session import Session
from mcp_protocol.stores.claims import Claim
from mcp_protocol.stores.errors import StoreUnavailable
from mcp_protocol.stores.redis import RedisEventStore, RedisSessionStore
from tests.support.private_redis import PrivateRedis, have_redis_server

from .conftest import eventually, within

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
        private_redis: PrivateRedis) -> None:
    options = {"url": private_redis.url, "prefix": "outage", "socket_timeout": 1.0}
    sessions = RedisSessionStore(**options)
    events = RedisEventStore(block_ms=200, **options)
    bus, other_worker = RedisBus(**options), RedisBus(**options)
    try:
        session = Session.create("alice")
        await sessions.create(session)
        event_id = await events.append(session.id, "r1", {"n": 0})
        sub = await bus.subscribe("changes")
        await other_worker.publish("changes", {"n": "before"})
        assert await within(anext_message(sub)) == {"n": "before"}
        live = events.listen(session.id, "r1", after=event_id)
        blocked = asyncio.create_task(anext_event(live))  # waiting in XREAD when Redis dies

        private_redis.stop()

        with pytest.raises(StoreUnavailable):
            await within(blocked, 10.0)
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
        got: list[dict[str, Any]] = []
        seen: list[dict[str, Any]] = []

        async def next_published(sub: Subscription) -> dict[str, Any]:
            async for message in sub:
                seen.append(message)
                if message != RESYNC:
                    return message
            raise AssertionError("subscription ended")

        receiving = asyncio.create_task(next_published(sub))

        async def resubscribed() -> bool:
            await other_worker.publish("changes", {"n": "after"})
            try:
                got.append(await asyncio.wait_for(asyncio.shield(receiving), 0.2))
            except TimeoutError:
                return False
            return True

        await eventually(resubscribed, seconds=10.0, step=0.05)
        assert got == [{"n": "after"}] and seen[0] == RESYNC
        await within(asyncio.to_thread(other_worker.publish_sync, "changes", {"n": "sync"}))
        message = await within(anext_message(sub))
        while message == {"n": "after"}:  # a slow probe's copy may still be queued
            message = await within(anext_message(sub))
        assert message == {"n": "sync"}
        # A SUBSCRIBE that failed during the outage does not jam the channel afterwards.
        elsewhere = await within(other_worker.subscribe("elsewhere"))
        await bus.publish("elsewhere", {"n": "elsewhere"})
        assert await within(anext_message(elsewhere)) == {"n": "elsewhere"}
        await elsewhere.close()
        await sub.close()
    finally:
        for closeable in (sessions, events, bus, other_worker):
            await closeable.close()


async def anext_message(sub: Subscription) -> dict[str, Any]:
    """The next published message (a backend's RESYNC after a reconnect is skipped)."""
    async for message in sub:
        if message != RESYNC:
            return message
    raise AssertionError("subscription ended")


async def anext_event(events: Any) -> Any:
    async for event in events:
        return event
    raise AssertionError("listen ended")
