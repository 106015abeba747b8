"""Contract of the session caps as sessions accumulate (``SessionStore.create``), on memory, Redis,
Cluster and Sentinel: a create costs the same at 0 or thousands of live sessions of one principal;
the caps stay exact through sliding expiry (a session kept alive by loads keeps its place), expiry
and deletion (they free it), with no load or save needed to notice."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import pytest

from mcp_protocol.session import Session
from mcp_protocol.store_errors import SessionLimitReached
from mcp_protocol.stores.memory import MemorySessionStore
from mcp_protocol.stores.redis import RedisSessionStore
from mcp_protocol.stores.sessions import SessionStore
from tests.support.polling import eventually, within

Make = Callable[..., SessionStore]
LIVE = 3000  # live sessions of one principal in the store under test
BLOCK = 300
PAIRS = 5
RATIO = 0.5  # a scan of the principal's sessions per create measured 0.02-0.2x here


async def _block_rate(store: SessionStore, principal: str, *, undo: bool = False) -> float:
    made = [Session.create(principal) for _ in range(BLOCK)]
    started = time.perf_counter()
    for session in made:
        await store.create(session)
    rate = BLOCK / (time.perf_counter() - started)
    if undo:  # back to no live session
        for session in made:
            await store.delete(session.id)
    return rate


async def test_create_costs_the_same_with_thousands_of_live_sessions(
    backend: str, make_session_store: Make, prefix: str, redis_options: dict[str, Any]
) -> None:
    caps = {"max_sessions": 10 * LIVE, "max_sessions_per_principal": 10 * LIVE}
    full = make_session_store(**caps)
    # The same backend with no live session, under its own prefix (cleaned up with the test's).
    empty: SessionStore = (MemorySessionStore(**caps) if backend == "memory"
                           else RedisSessionStore(prefix=f"{prefix}-empty", **redis_options, **caps))
    queue = iter(range(LIVE))

    async def fill() -> None:
        for _ in queue:
            await full.create(Session.create("alice"))

    await within(asyncio.gather(*(fill() for _ in range(16))), 120)
    # Interleaved pairs, so load from elsewhere on the box (a parallel test run) hits both sides
    # alike; the second-best pair decides. Load only ever slows one side of a pair, and a scan per
    # create never reaches RATIO in any pair, while the median of five fell to 0.496 on a loaded
    # machine (pairs 0.50, 0.15, 0.98, 0.43, 0.76) with creates that cost the same.
    ratios = []
    try:
        for _ in range(PAIRS):
            at_empty = await _block_rate(empty, "alice", undo=True)
            ratios.append(await _block_rate(full, "alice") / at_empty)
    finally:
        await empty.close()
    ratio = sorted(ratios)[-2]
    assert await full.count("alice") == LIVE + PAIRS * BLOCK
    assert ratio >= RATIO, (
        f"creates/s with {LIVE:,}+ live sessions of one principal are {ratio:.2f}x those with none "
        f"(pairs: {', '.join(f'{r:.2f}' for r in ratios)})")


async def test_a_session_kept_alive_by_loads_keeps_its_place_under_both_caps(
    make_session_store: Make,
) -> None:
    store = make_session_store(max_sessions=1, max_sessions_per_principal=1, ttl=0.4)
    kept = Session.create("alice")
    await store.create(kept)
    deadline = time.monotonic() + 1.2  # three idle periods: past its first expected expiry twice
    while time.monotonic() < deadline:
        assert await store.load(kept.id) is not None
        await asyncio.sleep(0.1)
    for principal in ("alice", "bob"):
        with pytest.raises(SessionLimitReached):
            await store.create(Session.create(principal))
    assert await store.count("alice") == 1 and await store.count() == 1


async def test_a_session_kept_alive_by_saves_keeps_its_place_under_the_principal_cap(
    make_session_store: Make,
) -> None:
    store = make_session_store(max_sessions_per_principal=1, ttl=0.4)
    kept = Session.create("alice")
    await store.create(kept)
    deadline = time.monotonic() + 1.2
    while time.monotonic() < deadline:
        loaded = await store.load(kept.id)
        assert loaded is not None
        loaded.log_level = "debug" if loaded.log_level != "debug" else "info"
        loaded.mark_dirty()
        await store.save(loaded)
        await asyncio.sleep(0.1)
    with pytest.raises(SessionLimitReached):
        await store.create(Session.create("alice"))
    await store.create(Session.create("bob"))
    assert await store.count("alice") == 1


async def test_expired_and_deleted_sessions_free_the_cap_of_their_principal_only(
    make_session_store: Make,
) -> None:
    store = make_session_store(max_sessions_per_principal=20, ttl=0.3)
    alice = [Session.create("alice") for _ in range(20)]
    for session in alice:
        await store.create(session)
    with pytest.raises(SessionLimitReached):
        await store.create(Session.create("alice"))
    await store.delete(alice[0].id)
    await store.create(Session.create("alice"))  # the deleted one's place

    async def all_expired() -> bool:
        return await store.count("alice") == 0 and await store.count() == 0

    await eventually(all_expired, seconds=4.0, step=0.05)
    for _ in range(20):
        await store.create(Session.create("alice"))
    assert await store.count("alice") == 20
