"""Contract of ``SessionStore`` (mcp_protocol/stores/sessions.py), run against memory and Redis.

Two instances made by ``make_session_store`` stand for two workers ([L] transports.mdx "Session
Management": any worker serves any request of any session, no sticky sessions).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import pytest

from mcp_protocol.session import Session
from mcp_protocol.store_errors import CreateError, SessionLimitReached, UpdateError
from mcp_protocol.stores.sessions import SessionStore
from tests.support.polling import eventually, within

Make = Callable[..., SessionStore]


async def test_created_session_loads_with_every_field_on_another_worker(make_session_store: Make) -> None:
    a, b = make_session_store(), make_session_store()
    session = Session.create(principal="alice")
    session.protocol_version = "2025-11-25"
    session.client_info = {"name": "c", "version": "1"}
    session.client_capabilities = {"roots": {"listChanged": True}}
    session.log_level = "info"
    session.subscriptions = {"file:///a"}
    session.state = "ready"
    await a.create(session)
    loaded = await b.load(session.id)
    assert loaded == session
    assert await b.subscribers("file:///a") == [session.id]


async def test_load_of_unknown_id_returns_none(make_session_store: Make) -> None:
    assert await make_session_store().load("no-such-session") is None


async def test_concurrent_creates_of_one_id_let_exactly_one_succeed(make_session_store: Make) -> None:
    workers = [make_session_store(), make_session_store()]
    session = Session.create()
    results = await within(asyncio.gather(
        *(workers[i % 2].create(Session(id=session.id)) for i in range(12)), return_exceptions=True))
    assert sum(r is None for r in results) == 1
    assert all(isinstance(r, CreateError) for r in results if r is not None)


async def test_mutating_a_loaded_session_changes_nothing_until_save(make_session_store: Make) -> None:
    store = make_session_store()
    session = Session.create()
    await store.create(session)
    loaded = await store.load(session.id)
    assert loaded is not None
    loaded.subscriptions.add("file:///x")
    again = await store.load(session.id)
    assert again is not None and again.subscriptions == set()


async def test_cap_on_live_sessions_refuses_create_with_the_limit(make_session_store: Make) -> None:
    store = make_session_store(max_sessions=2)
    await store.create(Session.create())
    await store.create(Session.create())
    with pytest.raises(SessionLimitReached) as caught:
        await store.create(Session.create())
    assert caught.value.limit == 2
    assert await store.count() == 2


async def test_cap_holds_under_concurrent_creates_from_two_workers(make_session_store: Make) -> None:
    workers = [make_session_store(max_sessions=5), make_session_store(max_sessions=5)]
    results = await within(asyncio.gather(
        *(workers[i % 2].create(Session.create()) for i in range(20)), return_exceptions=True))
    assert sum(r is None for r in results) == 5
    assert all(isinstance(r, SessionLimitReached) for r in results if r is not None)
    assert await workers[0].count() == 5


async def test_cap_per_principal_counts_only_that_principals_sessions(make_session_store: Make) -> None:
    store = make_session_store(max_sessions_per_principal=2)
    await store.create(Session.create("alice"))
    await store.create(Session.create("alice"))
    with pytest.raises(SessionLimitReached) as caught:
        await store.create(Session.create("alice"))
    assert caught.value.limit == 2
    await store.create(Session.create("bob"))
    assert await store.count("alice") == 2
    assert await store.count("bob") == 1
    assert await store.count() == 3


async def test_refused_create_leaves_no_session_behind(make_session_store: Make) -> None:
    store = make_session_store(max_sessions=1)
    await store.create(Session.create())
    refused = Session.create()
    with pytest.raises(SessionLimitReached):
        await store.create(refused)
    assert await store.load(refused.id) is None


async def test_deleted_and_expired_sessions_free_their_place_under_the_cap(make_session_store: Make) -> None:
    store = make_session_store(max_sessions=1, max_sessions_per_principal=1, ttl=0.3)
    first = Session.create("alice")
    await store.create(first)
    await store.delete(first.id)
    second = Session.create("alice")
    await store.create(second)

    async def third_fits() -> bool:
        try:
            await store.create(Session.create("alice"))
        except SessionLimitReached:
            return False
        return True

    await eventually(third_fits, seconds=3.0, step=0.05)


async def test_idle_session_expires_after_ttl(make_session_store: Make) -> None:
    store = make_session_store(ttl=0.3)
    session = Session.create()
    await store.create(session)

    async def gone() -> bool:  # not polled with load(), which would slide the expiry
        return session.id not in await store.session_ids()

    await eventually(gone, seconds=3.0, step=0.05)
    assert await store.count() == 0
    assert await store.load(session.id) is None


async def keeps_alive(store: SessionStore, session_id: str, how: str) -> None:
    """Three times the ttl of 0.4 s, kept alive by a ``load`` or a ``touch`` every 0.1 s."""
    loop = asyncio.get_running_loop()
    end = loop.time() + 1.2
    while loop.time() < end:
        if how == "load":
            assert await store.load(session_id) is not None
        else:
            assert await store.touch(session_id)
        await asyncio.sleep(0.1)


@pytest.mark.parametrize("how", ["load", "touch"])
async def test_load_and_touch_slide_the_expiry(make_session_store: Make, how: str) -> None:
    # touch: an open GET stream's heartbeat keeps its session alive without reading it.
    store = make_session_store(ttl=0.4)
    session = Session.create()
    await store.create(session)
    await keeps_alive(store, session.id, how)
    assert session.id in await store.session_ids()
    assert (await store.load(session.id)) is not None


async def test_touch_tells_a_session_that_is_gone(make_session_store: Make) -> None:
    store = make_session_store()
    session = Session.create()
    await store.create(session)
    assert await store.touch(session.id)
    await store.delete(session.id)
    assert not await store.touch(session.id)
    assert not await store.touch("never-created")


async def test_save_persists_changes_for_every_worker(make_session_store: Make) -> None:
    a, b = make_session_store(), make_session_store()
    session = Session.create()
    await a.create(session)
    session.state = "ready"
    session.log_level = "debug"
    session.mark_dirty()
    await a.save(session)
    assert session.dirty is False
    loaded = await b.load(session.id)
    assert loaded is not None and loaded.state == "ready" and loaded.log_level == "debug"


async def test_concurrent_saves_of_one_session_from_two_workers_all_persist(make_session_store: Make) -> None:
    # Two requests of one session run at once, each with its own copy ([L] transports.mdx
    # "Multiple Connections"): the subscriptions and the log level of every one of them stick.
    a, b = make_session_store(), make_session_store()
    session = Session.create()
    await a.create(session)
    copies = [await (a if i % 2 else b).load(session.id) for i in range(20)]
    for i, copy in enumerate(copies):
        assert copy is not None
        copy.subscriptions.add(f"file:///{i}")
        copy.mark_dirty()
    leveller = await a.load(session.id)
    assert leveller is not None
    leveller.log_level = "error"
    saves = [(a if i % 2 else b).save(c) for i, c in enumerate(copies) if c is not None]
    await within(asyncio.gather(*saves, a.save(leveller)))
    stored = await b.load(session.id)
    assert stored is not None
    assert stored.subscriptions == {f"file:///{i}" for i in range(20)} and stored.log_level == "error"
    assert await a.subscribers("file:///7") == [session.id]


async def test_an_unsubscribe_removes_only_its_own_uri(make_session_store: Make) -> None:
    a, b = make_session_store(), make_session_store()
    session = Session.create()
    session.subscriptions = {"file:///a"}
    await a.create(session)
    leaving, joining = await a.load(session.id), await b.load(session.id)
    assert leaving is not None and joining is not None
    leaving.subscriptions.discard("file:///a")
    joining.subscriptions.add("file:///b")
    await b.save(joining)
    await a.save(leaving)  # its copy never saw file:///b: that must survive
    stored = await a.load(session.id)
    assert stored is not None and stored.subscriptions == {"file:///b"}
    assert await b.subscribers("file:///a") == [] and await b.subscribers("file:///b") == [session.id]


async def test_list_sessions_reports_when_each_was_last_seen(make_session_store: Make) -> None:
    store = make_session_store(ttl=60)
    session = Session.create()
    session.last_seen = 0.0
    await store.create(session)
    await store.load(session.id)
    seen = time.time()
    listed = await store.list_sessions()
    assert [s.id for s in listed] == [session.id]
    assert abs(listed[0].last_seen - seen) < 2.0


async def test_save_slides_the_expiry(make_session_store: Make) -> None:
    store = make_session_store(ttl=0.4)
    session = Session.create()
    await store.create(session)
    loop = asyncio.get_running_loop()
    end = loop.time() + 1.2
    while loop.time() < end:
        await store.save(session)
        await asyncio.sleep(0.1)
    assert await store.load(session.id) is not None


async def test_save_never_resurrects_a_deleted_session(make_session_store: Make) -> None:
    a, b = make_session_store(), make_session_store()
    session = Session.create()
    await a.create(session)
    assert await b.delete(session.id) is True
    with pytest.raises(UpdateError):
        await a.save(session)
    assert await a.load(session.id) is None


async def test_save_never_resurrects_an_expired_session(make_session_store: Make) -> None:
    store = make_session_store(ttl=0.2)
    session = Session.create()
    await store.create(session)

    async def gone() -> bool:
        return await store.count() == 0

    await eventually(gone, seconds=3.0)
    with pytest.raises(UpdateError):
        await store.save(session)


async def test_save_of_a_never_created_session_raises_update_error(make_session_store: Make) -> None:
    with pytest.raises(UpdateError):
        await make_session_store().save(Session.create())


async def test_delete_reports_existence_and_ends_the_session_on_every_worker(
        make_session_store: Make) -> None:
    a, b = make_session_store(), make_session_store()
    session = Session.create()
    await a.create(session)
    assert await a.delete(session.id) is True
    assert await a.delete(session.id) is False
    assert await b.load(session.id) is None
    assert session.id not in await b.session_ids()


async def test_list_sessions_is_newest_first_and_limited(make_session_store: Make) -> None:
    store = make_session_store()
    sessions = [Session.create() for _ in range(5)]
    for i, session in enumerate(sessions):
        session.created_at = 1_000_000.0 + i
        await store.create(session)
    await store.delete(sessions[3].id)
    listed = await store.list_sessions(limit=3)
    assert [s.id for s in listed] == [sessions[4].id, sessions[2].id, sessions[1].id]
    everything = await store.list_sessions()
    assert [s.id for s in everything] == [sessions[i].id for i in (4, 2, 1, 0)]


async def test_list_sessions_pages_after_a_position_without_skipping_ties(make_session_store: Make) -> None:
    store = make_session_store()
    sessions = [Session.create() for _ in range(7)]
    for i, session in enumerate(sessions):
        session.created_at = 1_000_000.0 + i // 2  # pairs created at the same instant
        await store.create(session)
    newest_first = sorted(sessions, key=lambda s: (s.created_at, s.id), reverse=True)
    seen: list[str] = []
    after: tuple[float, str] | None = None
    while page := await store.list_sessions(limit=2, after=after):
        seen += [s.id for s in page]
        after = (page[-1].created_at, page[-1].id)
        if len(page) == 2 and page[-1].id == newest_first[2].id:
            await store.delete(page[-1].id)  # the position holds after its session is gone
    assert seen == [s.id for s in newest_first]


async def test_session_ids_and_count_list_the_live_sessions(make_session_store: Make) -> None:
    store = make_session_store()
    sessions = [Session.create("p") for _ in range(3)]
    for session in sessions:
        await store.create(session)
    assert sorted(await store.session_ids()) == sorted(s.id for s in sessions)
    assert await store.count() == 3
    assert await store.count("p") == 3
    assert await store.count("nobody") == 0


async def test_subscribers_follow_saved_subscriptions(make_session_store: Make) -> None:
    a, b = make_session_store(), make_session_store()
    one, two, other = Session.create(), Session.create(), Session.create()
    for session in (one, two, other):
        await a.create(session)
    one.subscriptions = {"file:///a", "file:///b"}
    two.subscriptions = {"file:///a"}
    await a.save(one)
    await b.save(two)
    assert sorted(await b.subscribers("file:///a")) == sorted([one.id, two.id])
    assert await a.subscribers("file:///b") == [one.id]
    assert await a.subscribers("file:///none") == []

    one.subscriptions.discard("file:///a")
    await b.save(one)
    assert await a.subscribers("file:///a") == [two.id]
    await a.delete(two.id)
    assert await b.subscribers("file:///a") == []
    assert await b.subscribers("file:///b") == [one.id]


async def test_expired_sessions_leave_the_subscribers_index(make_session_store: Make) -> None:
    store = make_session_store(ttl=0.3)
    session = Session.create()
    await store.create(session)
    session.subscriptions = {"file:///a"}
    await store.save(session)
    assert await store.subscribers("file:///a") == [session.id]

    async def unsubscribed() -> bool:
        return await store.subscribers("file:///a") == []

    await eventually(unsubscribed, seconds=3.0, step=0.05)


