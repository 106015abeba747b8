"""Contract of the batch operations of ``EventStore`` (``append_many``, ``append_encoded``,
``broadcast``) and of
``SessionStore.initialized_session_ids``, and of listening at scale: many listeners of one process
share the backend's readers (Redis: ``stores/redis/tail.py`` shards of ``SHARD_KEYS`` streams), and each
still sees every event of its stream once, in order, whenever it joined.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable

from mcp_protocol.jsonrpc import dumps
from mcp_protocol.session import Session
from mcp_protocol.stores.events import Event, EventStore, parse_event_id
from mcp_protocol.stores.redis.tail import SHARD_KEYS
from mcp_protocol.stores.sessions import SessionStore
from tests.support.polling import within
from tests.support.subscriptions import first, take

Make = Callable[..., EventStore]


async def test_append_many_assigns_increasing_ids_in_order_and_listeners_see_them_once(
        make_event_store: Make) -> None:
    writer, reader = make_event_store(), make_event_store()
    before = await writer.append("s1", "r1", {"n": 0})
    live = reader.listen("s1", "r1", after=before)
    pending = asyncio.ensure_future(take(live, 3))
    ids = await writer.append_many("s1", "r1", [{"n": 1}, {"n": 2}, {"n": 3}])
    assert [parse_event_id(i)[0] for i in ids] == ["r1"] * 3
    seqs = [parse_event_id(i)[1] for i in ids]
    assert seqs == sorted(seqs) and len(set(seqs)) == 3 and seqs[0] > parse_event_id(before)[1]
    got = await within(pending)
    assert [(e.id, e.message) for e in got] == list(zip(ids, [{"n": 1}, {"n": 2}, {"n": 3}], strict=True))
    assert await writer.append_many("s1", "r1", []) == []


async def test_append_encoded_stores_the_bytes_given_and_reads_back_the_same_messages(
        make_event_store: Make) -> None:
    """A stream stores the wire form it sends (streams.py): listeners, on any worker, get the
    message and that wire form back, in order with what ``append_many`` wrote."""
    writer, reader = make_event_store(), make_event_store()
    messages = [{"jsonrpc": "2.0", "id": 7, "result": {"text": "héllo \u2028 ☃"}}, {"_mcp": "end"}]
    first_id = (await writer.append_many("s1", "r1", [{"n": 0}]))[0]
    ids = await writer.append_encoded("s1", "r1", [dumps(m) for m in messages])
    assert [parse_event_id(i)[1] for i in ids] == sorted(parse_event_id(i)[1] for i in ids)
    assert parse_event_id(ids[0])[1] > parse_event_id(first_id)[1]
    got = await within(take(reader.listen("s1", "r1"), 3))
    assert [(e.id, e.message) for e in got] == [(first_id, {"n": 0}), *zip(ids, messages, strict=True)]
    assert all(e.data is None or e.data == dumps(e.message) for e in got)
    assert await writer.append_encoded("s1", "r1", []) == []


async def test_broadcast_appends_the_message_once_to_each_sessions_stream(make_event_store: Make) -> None:
    store = make_event_store()
    sessions = [f"b{i}" for i in range(25)]
    anchors = {sid: await store.append(sid, "_GET", {"n": "anchor"}) for sid in sessions}
    assert await store.broadcast(sessions, "_GET", {"method": "changed"}) == len(sessions)
    for sid in sessions:
        event = await first(store.listen(sid, "_GET", after=anchors[sid]))
        assert event.message == {"method": "changed"}
        assert parse_event_id(event.id)[0] == "_GET"
    assert await store.broadcast([], "_GET", {"method": "changed"}) == 0


async def test_many_listeners_beyond_one_reader_shard_each_get_their_own_events(
        make_event_store: Make) -> None:
    writer, reader = make_event_store(), make_event_store()
    count = SHARD_KEYS + 20  # Redis: more streams than one XREAD reader takes
    sessions = [f"m{i}" for i in range(count)]
    listeners = [reader.listen(sid, "_GET") for sid in sessions]
    # Each listener replays (nothing) and registers with the shared reader.
    firsts = [asyncio.ensure_future(anext(events)) for events in listeners]
    await asyncio.sleep(0.2)
    try:
        await writer.broadcast(sessions, "_GET", {"n": 1})
        got: list[Event] = await within(asyncio.gather(*firsts), 20.0)
        assert all(e.message == {"n": 1} for e in got)
        await writer.broadcast(sessions[::2], "_GET", {"n": 2})
        seconds = await within(asyncio.gather(*(anext(listeners[i]) for i in range(0, count, 2))), 20.0)
        assert all(e.message == {"n": 2} for e in seconds)
    finally:
        for fut in firsts:
            fut.cancel()
        for events in listeners:
            with contextlib.suppress(Exception):
                await events.aclose()  # type: ignore[attr-defined]


async def test_a_listener_joining_behind_another_on_the_same_stream_misses_nothing(
        make_event_store: Make) -> None:
    writer, reader = make_event_store(), make_event_store()
    ids = [await writer.append("s1", "r1", {"n": i}) for i in range(3)]
    ahead = reader.listen("s1", "r1", after=ids[2])
    ahead_next = asyncio.ensure_future(anext(ahead))
    await asyncio.sleep(0.1)
    ids.append(await writer.append("s1", "r1", {"n": 3}))
    assert (await within(ahead_next)).message == {"n": 3}
    # Joins from an older position while the first listener already read past it.
    behind = reader.listen("s1", "r1", after=ids[0])
    try:
        got = await take(behind, 3)
        assert [e.message["n"] for e in got] == [1, 2, 3]
        ids.append(await writer.append("s1", "r1", {"n": 4}))
        assert (await first(ahead)).message == {"n": 4}
        assert (await first(behind)).message == {"n": 4}
    finally:
        for events in (ahead, behind):
            await events.aclose()  # type: ignore[attr-defined]


async def test_listeners_come_and_go_while_events_flow(make_event_store: Make) -> None:
    writer, reader = make_event_store(), make_event_store()
    total = 60

    async def follow(sid: str) -> list[int]:
        events: AsyncIterator[Event] = reader.listen(sid, "_GET")
        try:
            return [e.message["n"] for e in await take(events, total, 20.0)]
        finally:
            await events.aclose()  # type: ignore[attr-defined]

    async def churn() -> None:  # short-lived listeners on other streams reshape the reader's keys
        for i in range(30):
            events = reader.listen(f"churn{i}", "_GET")
            pending = asyncio.ensure_future(anext(events))
            await asyncio.sleep(0.005)
            pending.cancel()
            with contextlib.suppress(BaseException):
                await pending
            await events.aclose()  # type: ignore[attr-defined]

    followers = [asyncio.ensure_future(follow(f"f{i}")) for i in range(5)]
    await asyncio.sleep(0.1)
    churner = asyncio.ensure_future(churn())
    for n in range(total):
        await writer.broadcast([f"f{i}" for i in range(5)], "_GET", {"n": n})
        if n % 5 == 0:
            await asyncio.sleep(0.01)
    results = await within(asyncio.gather(*followers), 30.0)
    await within(churner, 10.0)
    assert results == [list(range(total))] * 5


async def test_initialized_session_ids_lists_only_sessions_past_initialized(
        make_session_store: Callable[..., SessionStore]) -> None:
    store = make_session_store()
    ready, fresh = Session.create(), Session.create()
    ready.state = "ready"
    for session in (ready, fresh):
        await store.create(session)
    assert await store.initialized_session_ids() == [ready.id]
    fresh.state = "ready"
    await store.save(fresh)
    assert sorted(await store.initialized_session_ids()) == sorted([ready.id, fresh.id])
    await store.delete(ready.id)
    assert await store.initialized_session_ids() == [fresh.id]


async def test_initialized_among_reads_the_session_state_not_a_client_s_lookalike(
        make_session_store: Callable[..., SessionStore]) -> None:
    # The Redis store reads the state from the record's tail without parsing it: a client whose
    # own data says "state": "ready" is still not initialized.
    store = make_session_store()
    ready, fresh = Session.create(), Session.create()
    ready.state = "ready"
    fresh.client_info = {"name": "x", "state": "ready", "created_at": 1, "last_seen": 2}
    fresh.client_capabilities = {"experimental": {"s": {"state": "ready"}}}
    for session in (ready, fresh):
        await store.create(session)
    assert await store.initialized_among([fresh.id, ready.id]) == [ready.id]
    fresh.state = "ready"
    await store.save(fresh)
    assert await store.initialized_among([fresh.id, ready.id]) == [fresh.id, ready.id]
