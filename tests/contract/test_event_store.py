"""Contract of ``EventStore`` (mcp_protocol/stores/events.py), run against memory and Redis.

Pins [L] basic/transports.mdx "Resumability and Redelivery": event ids unique within the session
and encoding their stream, replay of only the stream the id belongs to, and nothing lost or
repeated between the replay and the live tail.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

import pytest

from mcp_protocol.store_errors import StreamLagging, UnknownEvent
from mcp_protocol.stores.events import EventStore, parse_event_id
from tests.support.polling import eventually, within
from tests.support.subscriptions import first, take

Make = Callable[..., EventStore]


async def test_ids_name_their_stream_and_increase_within_it(make_event_store: Make) -> None:
    store = make_event_store()
    ids = [await store.append("s1", "r1", {"n": i}) for i in range(5)]
    parsed = [parse_event_id(i) for i in ids]
    assert all(stream == "r1" for stream, _ in parsed)
    seqs = [seq for _, seq in parsed]
    assert seqs == sorted(seqs) and len(set(seqs)) == 5


async def test_ids_are_unique_within_the_session_across_streams_and_workers(make_event_store: Make) -> None:
    a, b = make_event_store(), make_event_store()
    ids = await within(asyncio.gather(
        *(w.append("s1", stream, {"n": i}) for i in range(10) for w in (a, b) for stream in ("r1", "r2"))))
    assert len(set(ids)) == len(ids) == 40


async def test_listen_without_id_replays_retained_events_then_follows_live(make_event_store: Make) -> None:
    store = make_event_store()
    ids = [await store.append("s1", "r1", {"n": i}) for i in range(3)]
    events = store.listen("s1", "r1")
    replayed = await take(events, 3)
    assert [e.id for e in replayed] == ids
    assert [e.message for e in replayed] == [{"n": 0}, {"n": 1}, {"n": 2}]
    live_id = await store.append("s1", "r1", {"n": 3})
    assert (await first(events)).id == live_id
    await events.aclose()  # type: ignore[attr-defined]


async def test_messages_round_trip_as_json(make_event_store: Make) -> None:
    store = make_event_store()
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": "notifications/message",
                               "params": {"level": "info", "data": {"a": [1, 2.5, None, True, "é"]}}}
    await store.append("s1", "r1", message)
    event = await first(store.listen("s1", "r1"))
    assert event.message == message


async def test_replay_after_an_id_yields_only_later_events_of_that_stream(make_event_store: Make) -> None:
    a, b = make_event_store(), make_event_store()
    r1: list[str] = []
    for i in range(4):
        r1.append(await a.append("s1", "r1", {"stream": "r1", "n": i}))
        await a.append("s1", "r2", {"stream": "r2", "n": i})
        await a.append("s2", "r1", {"stream": "other-session", "n": i})
    events = b.listen("s1", "r1", after=r1[1])
    replayed = await take(events, 2)
    assert [e.id for e in replayed] == r1[2:]
    assert [e.message for e in replayed] == [{"stream": "r1", "n": 2}, {"stream": "r1", "n": 3}]
    # The live tail stays on the stream too: another stream's event is never yielded.
    await a.append("s1", "r2", {"stream": "r2", "n": 99})
    await a.append("s2", "r1", {"stream": "other-session", "n": 99})
    last = await a.append("s1", "r1", {"stream": "r1", "n": 99})
    event = await first(events)
    assert event.id == last and event.message["stream"] == "r1"
    await events.aclose()  # type: ignore[attr-defined]


async def test_resuming_from_the_newest_id_replays_nothing_then_follows_live(make_event_store: Make) -> None:
    store = make_event_store()
    newest = [await store.append("s1", "r1", {"n": i}) for i in range(2)][-1]
    events = store.listen("s1", "r1", after=newest)
    later = await store.append("s1", "r1", {"n": 2})
    assert (await first(events)).id == later
    await events.aclose()  # type: ignore[attr-defined]


async def test_id_of_another_stream_is_unknown(make_event_store: Make) -> None:
    store = make_event_store()
    other = await store.append("s1", "r2", {"n": 0})
    await store.append("s1", "r1", {"n": 0})
    with pytest.raises(UnknownEvent):
        await first(store.listen("s1", "r1", after=other))


async def test_id_of_another_session_is_unknown(make_event_store: Make) -> None:
    store = make_event_store()
    theirs = await store.append("s2", "r1", {"n": 0})
    with pytest.raises(UnknownEvent):
        await first(store.listen("s1", "r1", after=theirs))


@pytest.mark.parametrize("bad", [
    "", "r1", "r1.", ".5", "r1.x", "r1.-3", "r1.1.5x", "r1. 5",
    "r1.\u00b2", "r1.\u0661",  # str.isdigit() accepts both; only ASCII digits are ids
    "r1." + "9" * 40,  # past any sequence a backend can issue
])
async def test_malformed_ids_are_unknown(make_event_store: Make, bad: str) -> None:
    store = make_event_store()
    await store.append("s1", "r1", {"n": 0})
    with pytest.raises(UnknownEvent):
        await first(store.listen("s1", "r1", after=bad))


async def test_never_issued_id_of_a_live_stream_is_unknown(make_event_store: Make) -> None:
    store = make_event_store()
    issued = await store.append("s1", "r1", {"n": 0})
    _, seq = parse_event_id(issued)
    with pytest.raises(UnknownEvent):
        await first(store.listen("s1", "r1", after=f"r1.{seq + 12345}"))


async def test_events_beyond_max_events_are_evicted(make_event_store: Make) -> None:
    store = make_event_store(max_events=3)
    ids = [await store.append("s1", "r1", {"n": i}) for i in range(6)]
    for evicted in ids[:3]:
        with pytest.raises(UnknownEvent):
            await first(store.listen("s1", "r1", after=evicted))
    events = store.listen("s1", "r1", after=ids[3])
    assert [e.id for e in await take(events, 2)] == ids[4:]
    await events.aclose()  # type: ignore[attr-defined]
    everything = store.listen("s1", "r1")
    assert [e.id for e in await take(everything, 3)] == ids[3:]
    await everything.aclose()  # type: ignore[attr-defined]


async def test_events_older_than_ttl_are_evicted(make_event_store: Make) -> None:
    store = make_event_store(ttl=0.3)
    old = await store.append("s1", "r1", {"n": 0})

    async def evicted() -> bool:
        try:
            await first(store.listen("s1", "r1", after=old))
        except UnknownEvent:
            return True
        return False

    # While the event is retained, listen() would block for a live event: bound each probe.
    async def probe() -> bool:
        try:
            return await asyncio.wait_for(evicted(), 0.1)
        except TimeoutError:
            return False

    await eventually(probe, seconds=3.0, step=0.05)


async def test_replay_and_live_tail_miss_nothing_and_repeat_nothing_under_concurrent_appends(
        make_event_store: Make) -> None:
    writer, reader = make_event_store(), make_event_store()
    total = 300
    ids: list[str] = []
    started = asyncio.Event()

    async def produce() -> None:
        for i in range(total):
            ids.append(await writer.append("s1", "r1", {"n": i}))
            await writer.append("s1", "r2", {"n": i})  # noise on a sibling stream
            if i == 50:
                started.set()
            if i % 7 == 0:
                await asyncio.sleep(0)

    producer = asyncio.create_task(produce())
    await within(started.wait())
    resume_from = ids[20]
    got = await take(reader.listen("s1", "r1", after=resume_from), total - 21, seconds=30.0)
    await within(producer)
    assert [e.message["n"] for e in got] == list(range(21, total))
    assert [e.id for e in got] == ids[21:]


async def test_listeners_started_concurrently_with_appends_see_every_event_once(
        make_event_store: Make) -> None:
    writer, reader = make_event_store(), make_event_store()
    total = 100

    async def produce() -> None:
        for i in range(total):
            await writer.append("s1", "r1", {"n": i})
            await asyncio.sleep(0)

    listeners = [reader.listen("s1", "r1") for _ in range(3)]
    producer = asyncio.create_task(produce())
    results = await within(asyncio.gather(*(take(events, total, 20.0) for events in listeners)), 30.0)
    await within(producer)
    for got in results:
        assert [e.message["n"] for e in got] == list(range(total))


async def test_delete_session_removes_all_its_streams_only(make_event_store: Make) -> None:
    store = make_event_store()
    mine = [await store.append("s1", stream, {"n": 0}) for stream in ("r1", "r2", "_GET")]
    theirs = await store.append("s2", "r1", {"n": 0})
    await store.append("s2", "r1", {"n": 1})
    await store.delete_session("s1")
    for event_id in mine:
        stream, _ = parse_event_id(event_id)
        with pytest.raises(UnknownEvent):
            await first(store.listen("s1", stream, after=event_id))
    assert (await first(store.listen("s2", "r1", after=theirs))).message == {"n": 1}


async def test_a_listener_too_far_behind_gets_stream_lagging_never_a_gap(make_event_store: Make) -> None:
    # A slow SSE client: its listener stops reading while more events arrive than the store keeps
    # for it. It must end with StreamLagging (the client resumes) rather than skip events.
    store = make_event_store(max_events=5)
    listener = store.listen("s1", "r1")
    await store.append("s1", "r1", {"n": 0})
    assert (await first(listener)).message == {"n": 0}  # live now
    await store.append_many("s1", "r1", [{"n": n} for n in range(1, 13)])
    got: list[int] = []
    with pytest.raises(StreamLagging):
        async with asyncio.timeout(5):
            async for event in listener:
                got.append(event.message["n"])
    assert got == list(range(1, len(got) + 1)) and len(got) < 12  # a gapless prefix


async def test_tagged_finds_the_sessions_a_tagged_broadcast_reached(make_event_store: Make) -> None:
    writer, reader = make_event_store(), make_event_store()
    await writer.broadcast(["s1", "s2"], "_GET", {"n": 1}, tag="change-1|list")
    await writer.broadcast(["s3"], "_GET", {"n": 2}, tag="change-2|list")
    await writer.append("s4", "_GET", {"n": 3})
    found = await reader.tagged(["s1", "s2", "s3", "s4", "s5"], "_GET", "change-1|list", within=60)
    assert found == {"s1", "s2"}
    assert await reader.tagged(["s1"], "r1", "change-1|list", within=60) == set()  # another stream
    # The tag stays internal: listeners get the message only.
    assert (await first(reader.listen("s1", "_GET"))).message == {"n": 1}


async def test_cancelling_a_listener_ends_it_promptly_whenever_the_cancel_lands(
        make_event_store: Make) -> None:
    # An SSE client that disconnects cancels its listen(); a cancel lost inside the backend would
    # leave the listener looping forever (redis-py on Python 3.11 can drop one while sending).
    store = make_event_store()
    only = await store.append("s1", "r1", {"n": 0})
    for i in range(40):
        events = store.listen("s1", "r1", after=None if i % 2 else only)
        pending = asyncio.ensure_future(events.__anext__())
        await asyncio.sleep(0.001 * (i % 20))
        pending.cancel()
        with contextlib.suppress(asyncio.CancelledError, UnknownEvent, StopAsyncIteration):
            await within(asyncio.shield(pending), 2.0)
        assert pending.done()
        await events.aclose()  # type: ignore[attr-defined]


async def test_a_finished_stream_replays_its_last_events_and_takes_an_append_after(
    make_event_store: Make,
) -> None:
    # A POST stream's last step is final (streams.PostStream.finish): a backend may compact the
    # log, yet a resume from any of its ids gets the rest, on any worker, for the whole ttl.
    a, b = make_event_store(), make_event_store()
    first_id = await a.append("s1", "r1", {"_mcpsite": "prime"})
    ids = await a.append_encoded("s1", "r1", [b'{"id":1,"result":{}}', b'{"_mcpsite":"end"}'], final=True)
    for store in (a, b, a):  # twice on the writer: the first resume may have thawed the log
        assert [e.id for e in await take(store.listen("s1", "r1", after=first_id), 2)] == ids
        assert [e.message for e in await take(store.listen("s1", "r1", after=ids[0]), 1)] == [
            {"_mcpsite": "end"}]
    later = await a.append("s1", "r1", {"late": True})
    assert [e.id for e in await take(b.listen("s1", "r1", after=ids[1]), 1)] == [later]
    await a.delete_session("s1")
    with pytest.raises(UnknownEvent):
        await first(b.listen("s1", "r1", after=ids[0]))
