"""The memory event store's logs (stores/memory/logs.py): finished ones kept for the whole ttl in
a form the cyclic collector stops tracking, still resumable after collections, and swept once
their ttl ran out; live ones nobody reads again swept too; a session's logs found through the
index by session, never by walking every stream."""

from __future__ import annotations

import asyncio
import gc

from mcp_protocol.store_errors import UnknownEvent
from mcp_protocol.stores.memory import MemoryEventStore


async def _finished_stream(store: MemoryEventStore, stream: str) -> tuple[str, list[str]]:
    first = await store.append("s1", stream, {"_mcpsite": "prime", "ids": [1]})
    rest = await store.append_encoded(
        "s1", stream, [b'{"jsonrpc":"2.0","id":1,"result":{}}', b'{"_mcpsite":"end"}'], final=True)
    return first, rest


async def test_a_finished_log_is_untracked_after_a_collection_and_still_resumes() -> None:
    store = MemoryEventStore()
    first, rest = await _finished_stream(store, "r1")
    assert ("s1", "r1") not in store._table.live
    gc.collect()
    assert not gc.is_tracked(store._table.finished[("s1", "r1")])
    listener = store.listen("s1", "r1", after=first)
    got = [await anext(listener), await anext(listener)]
    await listener.aclose()  # type: ignore[attr-defined]
    assert [e.id for e in got] == rest
    assert got[0].message == {"jsonrpc": "2.0", "id": 1, "result": {}}


async def test_a_log_being_listened_to_is_not_compacted() -> None:
    store = MemoryEventStore()
    first = await store.append("s1", "r1", {"_mcpsite": "prime"})
    listener = store.listen("s1", "r1", after=first)
    waiting = asyncio.ensure_future(anext(listener))
    await asyncio.sleep(0)
    await store.append_encoded("s1", "r1", [b'{"_mcpsite":"end"}'], final=True)
    assert (await asyncio.wait_for(waiting, 2)).message == {"_mcpsite": "end"}
    await listener.aclose()  # type: ignore[attr-defined]
    assert ("s1", "r1") in store._table.live


async def test_finished_logs_are_swept_after_their_ttl() -> None:
    store = MemoryEventStore(ttl=0.2)
    first, _ = await _finished_stream(store, "r1")
    await asyncio.sleep(0.25)
    await _finished_stream(store, "r2")  # a finish sweeps what expired
    assert list(store._table.finished) == [("s1", "r2")]
    try:
        await anext(store.listen("s1", "r1", after=first))
    except UnknownEvent:
        pass
    else:
        raise AssertionError("an expired finished log still replayed")


async def test_a_live_log_nobody_reads_again_is_swept_after_its_ttl() -> None:
    # A session that expired without a DELETE: its GET stream's log is never read again.
    store = MemoryEventStore(ttl=0.2)
    await store.append("gone", "_GET", {"n": 0})
    await asyncio.sleep(0.25)
    await store.append("s2", "r1", {"n": 0})  # a new log sweeps what expired
    assert list(store._table.live) == [("s2", "r1")]
    assert "gone" not in store._table._streams


async def test_a_log_touched_within_its_ttl_survives_the_sweep() -> None:
    store = MemoryEventStore(ttl=0.3)
    await store.append("s1", "_GET", {"n": 0})
    await asyncio.sleep(0.2)
    last = await store.append("s1", "_GET", {"n": 1})  # slides its expiry
    await asyncio.sleep(0.15)  # past the first append's due time, within the second's
    await store.append("s2", "r1", {"n": 0})
    assert ("s1", "_GET") in store._table.live
    assert (await anext(store.listen("s1", "_GET"))).id == last


async def test_delete_session_drops_live_and_finished_logs_and_leaves_no_index() -> None:
    store = MemoryEventStore()
    await _finished_stream(store, "r1")  # session s1, finished
    await store.append("s1", "_GET", {"n": 0})  # session s1, live
    other = await store.append("s2", "_GET", {"n": 0})
    await store.delete_session("s1")
    assert ("s1", "r1") not in store._table and ("s1", "_GET") not in store._table
    assert set(store._table._streams) == {"s2"}
    assert (await anext(store.listen("s2", "_GET"))).id == other
    store._table._sweep_live(float("inf"))  # every log is past its ttl by then
    assert not store._table.live and set(store._table._streams) == set()


async def test_the_index_forgets_a_stream_only_when_it_has_no_log_at_all() -> None:
    store = MemoryEventStore(ttl=0.2)
    first, _ = await _finished_stream(store, "r1")
    listener = store.listen("s1", "r1", after=first)  # thaws it into a live log
    await anext(listener)
    await listener.aclose()  # type: ignore[attr-defined]
    assert ("s1", "r1") in store._table.live and store._table._streams == {"s1": "r1"}
    await asyncio.sleep(0.25)
    await store.append("s2", "r1", {"n": 0})
    assert store._table._streams == {"s2": "r1"}


async def test_a_session_with_several_streams_is_indexed_by_a_set_until_they_expire() -> None:
    store = MemoryEventStore(ttl=0.2)
    await store.append("s1", "_GET", {"n": 0})
    assert store._table._streams == {"s1": "_GET"}  # one stream: the id itself, no container
    await store.append("s1", "r1", {"n": 0})
    assert store._table._streams == {"s1": {"_GET", "r1"}}
    await asyncio.sleep(0.25)
    await store.append("s1", "r2", {"n": 0})  # sweeps both expired logs, indexes the new one
    assert store._table._streams == {"s1": "r2"}  # the set emptied and went: one stream again
    await store.delete_session("s1")
    assert store._table._streams == {} and not store._table.live
