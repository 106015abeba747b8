"""Cross-worker pieces with the in-memory backends: change fan-out (fanout/) and the routing of a
client's answer to the worker awaiting it (transports/pending.py). Two instances stand for two
workers sharing one store and one bus."""

from __future__ import annotations

import asyncio
from typing import Any

from mcp_protocol.bus.base import CHANGES
from mcp_protocol.bus.memory import MemoryBus
from mcp_protocol.context import Context
from mcp_protocol.definitions import Tool
from mcp_protocol.fanout import Fanout, change_key
from mcp_protocol.jsonrpc import Response
from mcp_protocol.memory_provider import MemoryProvider
from mcp_protocol.session import Session
from mcp_protocol.stores.events import STANDALONE_STREAM
from mcp_protocol.stores.memory import MemoryEventStore, MemorySessionStore
from mcp_protocol.transports.pending import PendingRequests
from tests.unit.protocol.conftest import call, initialized, make_server


class CountingProvider(MemoryProvider):
    refreshes = 0

    async def refresh(self) -> None:
        self.refreshes += 1


async def standalone(events: MemoryEventStore, session_id: str) -> list[dict[str, object]]:
    found: list[dict[str, object]] = []
    listener = events.listen(session_id, STANDALONE_STREAM)
    try:
        while True:
            event = await asyncio.wait_for(anext(listener), 0.05)
            found.append(event.message)
    except TimeoutError:
        return found
    finally:
        await listener.aclose()  # type: ignore[attr-defined]


async def test_every_worker_refreshes_but_only_one_writes_each_change() -> None:
    sessions, events = MemorySessionStore(), MemoryEventStore()
    ready, fresh, subscriber = Session.create(), Session.create(), Session.create()
    ready.state = subscriber.state = "ready"
    subscriber.subscriptions = {"demo://readme"}
    for session in (ready, fresh, subscriber):
        await sessions.create(session)
    workers = [CountingProvider(), CountingProvider()]
    fanouts = [Fanout(p, sessions, events, MemoryBus()) for p in workers]
    change = {"id": "c1", "kind": "resources", "uris": ["demo://readme"]}
    written = [await f.apply(change) for f in fanouts]
    assert sorted(written) == [0, 3] and [p.refreshes for p in workers] == [1, 1]
    assert [m["method"] for m in await standalone(events, ready.id)] == [
        "notifications/resources/list_changed"
    ]
    assert await standalone(events, fresh.id) == []  # not initialized: no list_changed yet
    assert [m["method"] for m in await standalone(events, subscriber.id)] == [
        "notifications/resources/list_changed",
        "notifications/resources/updated",
    ]


async def test_fanout_listens_on_the_changes_channel() -> None:
    sessions, events, bus = MemorySessionStore(), MemoryEventStore(), MemoryBus()
    session = Session.create()
    session.state = "ready"
    await sessions.create(session)
    fanout = Fanout(CountingProvider(), sessions, events, bus)
    await fanout.start()
    try:
        await bus.publish(CHANGES, {"id": "c2", "kind": "tools", "uris": []})
        listener = events.listen(session.id, STANDALONE_STREAM)
        event = await asyncio.wait_for(anext(listener), 5)
        await listener.aclose()  # type: ignore[attr-defined]
        assert event.message == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
    finally:
        await fanout.stop()


def test_change_key_uses_the_id_or_a_stable_digest() -> None:
    assert change_key({"id": "x", "kind": "tools"}) == "fanout:x"
    assert change_key({"kind": "tools", "uris": []}) == change_key({"uris": [], "kind": "tools"})


async def test_answer_received_by_another_worker_resolves_the_waiter_through_the_bus() -> None:
    bus = MemoryBus()
    waiting, receiving = PendingRequests(bus), PendingRequests(bus)
    request_id = waiting.new_id()
    future = await waiting.expect("s1", request_id)
    await receiving.deliver("s1", Response(request_id, result={"ok": True}))
    response, _ = await asyncio.wait_for(future, 5)
    assert response.result == {"ok": True}
    await waiting.release("s1", request_id)
    assert waiting._listeners == {}


async def test_answer_on_the_same_worker_resolves_directly_and_errors_pass_through() -> None:
    pending = PendingRequests(MemoryBus())
    first, second = pending.new_id(), pending.new_id()
    assert first != second
    f1 = await pending.expect("s1", first)
    f2 = await pending.expect("s1", second)
    await pending.deliver("s1", Response(second, error={"code": -1, "message": "no"}))
    assert f2.done() and f2.result()[0].error == {"code": -1, "message": "no"} and not f1.done()
    await pending.release("s1", second)
    assert "s1" in pending._listeners  # still one request in flight
    await pending.release("s1", first)
    await pending.close()


class GatedProvider(MemoryProvider):
    """A rebuild that takes as long as the test says: it adds a tool once ``gate`` opens."""

    def __init__(self) -> None:
        super().__init__()
        self.gate, self.rebuilding = asyncio.Event(), asyncio.Event()

    async def refresh(self) -> None:
        self.rebuilding.set()
        await self.gate.wait()

        async def fresh(arguments: dict[str, Any], ctx: Context) -> dict[str, Any]:
            return {"content": []}

        self.add_tool(Tool("fresh", {"type": "object"}), fresh)


async def test_list_changed_goes_out_before_the_rebuild_and_a_re_list_waits_for_it() -> None:
    # commit -> first stream does not wait for the snapshot rebuild; a client that re-lists on
    # this worker as soon as it got list_changed still sees the change.
    provider = GatedProvider()
    server = make_server(provider)
    session = await initialized(server)
    sessions, events = MemorySessionStore(), MemoryEventStore()
    await sessions.create(session)
    fanout = Fanout(provider, sessions, events, MemoryBus())
    applying = asyncio.ensure_future(fanout.apply({"id": "new-tool", "kind": "tools", "uris": []}))
    await asyncio.wait_for(provider.rebuilding.wait(), 1)
    listener = events.listen(session.id, STANDALONE_STREAM)
    try:
        got = await asyncio.wait_for(anext(listener), 1)  # written while the rebuild still runs
    finally:
        await listener.aclose()  # type: ignore[attr-defined]
    assert got.message["method"] == "notifications/tools/list_changed"
    assert not provider.gate.is_set()
    listing = asyncio.ensure_future(call(server, session, "tools/list"))
    await asyncio.sleep(0.05)
    assert not listing.done()  # waits for the rebuild of the change it was told about
    provider.gate.set()
    tools = (await asyncio.wait_for(listing, 1))["result"]["tools"]
    assert "fresh" in [t["name"] for t in tools]
    assert await asyncio.wait_for(applying, 1) == 1
    assert provider.refreshing is None  # done: later requests do not wait
