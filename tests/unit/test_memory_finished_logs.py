"""The memory event store's finished logs (stores/memory.py ``_finish``): kept for the whole ttl
in a form the cyclic collector stops tracking, still resumable after collections, and swept once
their ttl ran out (before, a finished POST stream's log stayed until its session was deleted)."""

from __future__ import annotations

import asyncio
import gc

from mcp_protocol.stores.base import UnknownEvent
from mcp_protocol.stores.memory import MemoryEventStore


async def _finished_stream(store: MemoryEventStore, stream: str) -> tuple[str, list[str]]:
    first = await store.append("s1", stream, {"_mcpsite": "prime", "ids": [1]})
    rest = await store.append_encoded(
        "s1", stream, [b'{"jsonrpc":"2.0","id":1,"result":{}}', b'{"_mcpsite":"end"}'], final=True)
    return first, rest


async def test_a_finished_log_is_untracked_after_a_collection_and_still_resumes() -> None:
    store = MemoryEventStore()
    first, rest = await _finished_stream(store, "r1")
    assert ("s1", "r1") not in store._logs
    gc.collect()
    assert not gc.is_tracked(store._finished[("s1", "r1")])
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
    assert ("s1", "r1") in store._logs


async def test_finished_logs_are_swept_after_their_ttl() -> None:
    store = MemoryEventStore(ttl=0.2)
    first, _ = await _finished_stream(store, "r1")
    await asyncio.sleep(0.25)
    await _finished_stream(store, "r2")  # a finish sweeps what expired
    assert list(store._finished) == [("s1", "r2")]
    try:
        await anext(store.listen("s1", "r1", after=first))
    except UnknownEvent:
        pass
    else:
        raise AssertionError("an expired finished log still replayed")
