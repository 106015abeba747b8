"""Contract of ``SessionStore.endpoint_session_ids`` (mcp_protocol/stores/sessions.py), run against
memory, Redis, Cluster and Sentinel: the per-endpoint index the fan-out lists a change's sessions
from (issue 39 item 4) holds the live sessions created on that endpoint, on every worker, and
loses them as ``session_ids`` does: on delete and on expiry, never while a session is kept alive.
On Redis, it also repairs what an older version (no index) or a cut-short upkeep left behind.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from mcp_protocol.endpoints import CATCH_ALL
from mcp_protocol.redis_client.topology import RedisTopology
from mcp_protocol.session import Session
from mcp_protocol.stores.sessions import SessionStore
from tests.support.polling import eventually

Make = Callable[..., SessionStore]


async def created(store: SessionStore, endpoint: str, count: int, principal: str | None = None) -> list[str]:
    sessions = [Session.create(principal, endpoint=endpoint) for _ in range(count)]
    for session in sessions:
        await store.create(session)
    return sorted(s.id for s in sessions)


async def test_each_endpoint_lists_only_the_sessions_created_on_it_on_every_worker(
        make_session_store: Make) -> None:
    a, b = make_session_store(), make_session_store()
    on_a = await created(a, "a", 3)
    on_b = await created(b, "b", 2, principal="key:1")
    on_catch_all = await created(a, CATCH_ALL, 2)
    for store in (a, b):
        assert sorted(await store.endpoint_session_ids("a")) == on_a
        assert sorted(await store.endpoint_session_ids("b")) == on_b
        assert sorted(await store.endpoint_session_ids(CATCH_ALL)) == on_catch_all
        assert await store.endpoint_session_ids("never-used") == []
    assert sorted(await a.session_ids()) == sorted(on_a + on_b + on_catch_all)


async def test_a_deleted_session_leaves_its_endpoints_listing_on_every_worker(
        make_session_store: Make) -> None:
    a, b = make_session_store(), make_session_store()
    kept, deleted = await created(a, "a", 2)
    assert await b.delete(deleted) is True
    assert await a.endpoint_session_ids("a") == [kept]
    assert await b.endpoint_session_ids("a") == [kept]


async def test_an_expired_session_leaves_its_endpoints_listing(
        make_session_store: Make) -> None:
    store = make_session_store(ttl=0.3)
    [session_id] = await created(store, "a", 1)
    other = await created(store, "b", 1)

    async def gone() -> bool:  # not polled with load(), which would slide the expiry
        return await store.endpoint_session_ids("a") == []

    await eventually(gone, seconds=3.0, step=0.05)
    assert await store.endpoint_session_ids("b") == []  # the same ttl: gone as well
    assert session_id not in await store.session_ids() and other[0] not in await store.session_ids()


async def test_a_session_kept_alive_stays_in_its_endpoints_listing_past_the_ttl(
        make_session_store: Make) -> None:
    # The index entry's expected expiry passes while a load or a save slid the session's: the
    # listing re-checks it instead of dropping it.
    store = make_session_store(ttl=0.4)
    [loaded] = await created(store, "a", 1)
    [saved] = await created(store, "a", 1)
    saved_session = await store.load(saved)
    assert saved_session is not None
    loop = asyncio.get_running_loop()
    end = loop.time() + 1.2
    while loop.time() < end:
        assert await store.load(loaded) is not None
        await store.save(saved_session)
        await asyncio.sleep(0.1)
    assert sorted(await store.endpoint_session_ids("a")) == sorted([loaded, saved])


async def test_a_session_keeps_its_endpoint_across_saves(
        make_session_store: Make) -> None:
    a, b = make_session_store(), make_session_store()
    [session_id] = await created(a, "a", 1)
    copy = await b.load(session_id)
    assert copy is not None and copy.endpoint == "a"
    copy.state = "ready"
    copy.subscriptions = {"file:///x"}
    await b.save(copy)
    assert await a.endpoint_session_ids("a") == [session_id]
    assert await a.endpoint_session_ids(CATCH_ALL) == []
    assert await a.initialized_among(await a.endpoint_session_ids("a")) == [session_id]


@pytest.fixture
def raw_redis(backend: str, redis_options: dict[str, Any]) -> Iterator[Any]:
    """A plain client of the test's Redis, to put the index in states only an older version or a
    cut-short upkeep leaves behind (Redis backends only: the memory store has no such states)."""
    if backend == "memory":
        pytest.skip("the Redis index only")
    client = RedisTopology.from_options(**redis_options).sync_client(socket_timeout=5.0)
    yield client
    client.close()


async def test_sessions_stored_before_the_endpoint_index_are_adopted_on_the_first_listing(
        make_session_store: Make, raw_redis: Any, prefix: str) -> None:
    older = make_session_store()
    on_a = await created(older, "a", 2)
    on_catch_all = await created(older, CATCH_ALL, 1)
    # As a version without the index left them: in {P}:live only.
    for endpoint in ("a", CATCH_ALL):
        raw_redis.delete(f"{{{prefix}}}:endpoint:{json.dumps(endpoint)}")
    raw_redis.delete(f"{{{prefix}}}:endpoint_of")
    newer = make_session_store()
    assert sorted(await newer.endpoint_session_ids("a")) == on_a
    assert await newer.endpoint_session_ids(CATCH_ALL) == on_catch_all
    await newer.delete(on_a[0])  # adopted with their cleanup entry: delete removes them
    assert await make_session_store().endpoint_session_ids("a") == [on_a[1]]


async def test_an_entry_left_behind_by_a_cut_short_upkeep_leaves_the_listing(
        make_session_store: Make, raw_redis: Any, prefix: str) -> None:
    store = make_session_store()
    [kept] = await created(store, "a", 1)
    assert await store.endpoint_session_ids("a") == [kept]  # the adoption pass is behind it
    # A session whose record and {P}:live entry are gone, but not its endpoint entry.
    key = f"{{{prefix}}}:endpoint:{json.dumps('a')}"
    raw_redis.zadd(key, {"vanished": int(time.time() * 1000) - 1000})
    raw_redis.hset(f"{{{prefix}}}:endpoint_of", "vanished", key)
    assert await store.endpoint_session_ids("a") == [kept]
    assert raw_redis.zscore(key, "vanished") is None and not raw_redis.hexists(f"{{{prefix}}}:endpoint_of",
                                                                                 "vanished")
