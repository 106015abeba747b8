"""Change fan-out (mcp_protocol/fanout.py) across two workers sharing one store, on memory and on
Redis: each change is written once, and changes reach every stream in bus (commit) order even when
the worker writing an earlier change is slower than the one that could write the next."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from mcp_protocol.bus.memory import MemoryBus
from mcp_protocol.fanout import Fanout
from mcp_protocol.memory_provider import MemoryProvider
from mcp_protocol.session import Session
from mcp_protocol.stores.base import STANDALONE_STREAM, Claim, EventStore, SessionStore

from .conftest import within

CHANGES = [{"id": f"order-{kind}", "kind": kind, "uris": []} for kind in ("tools", "prompts", "resources")]


class GatedProvider(MemoryProvider):
    """A worker whose snapshot rebuild waits for ``gate`` (a slow database read)."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = asyncio.Event()
        self.refreshing = asyncio.Event()

    async def refresh(self) -> None:
        self.refreshing.set()
        await self.gate.wait()


class Watched(EventStore):
    """Forwards to a real store; sets ``held`` once a claim was answered HELD."""

    def __init__(self, inner: EventStore) -> None:
        self.inner = inner
        self.held = asyncio.Event()

    async def claim_once(self, key: str, lease: float) -> Claim:
        claim = await self.inner.claim_once(key, lease)
        if claim is Claim.HELD:
            self.held.set()
        return claim

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    # The abstract methods, forwarded.
    async def append(self, *args: Any) -> str:
        return await self.inner.append(*args)

    def listen(self, *args: Any, **kwargs: Any) -> Any:
        return self.inner.listen(*args, **kwargs)

    async def delete_session(self, session_id: str) -> None:
        await self.inner.delete_session(session_id)

    async def finish_once(self, key: str, ttl: float) -> None:
        await self.inner.finish_once(key, ttl)

    async def broadcast(self, *args: Any) -> int:
        return await self.inner.broadcast(*args)


async def test_changes_reach_a_stream_in_bus_order_when_the_first_writer_is_slow(
        make_event_store: Callable[..., EventStore], make_session_store: Callable[..., SessionStore]) -> None:
    session = Session.create()
    session.state = "ready"
    await make_session_store().create(session)
    slow, fast = GatedProvider(), GatedProvider()
    fast.gate.set()
    fast_events = Watched(make_event_store())
    workers = [Fanout(slow, make_session_store(), make_event_store(), MemoryBus()),
               Fanout(fast, make_session_store(), fast_events, MemoryBus())]

    async def consume(fanout: Fanout) -> list[int]:  # one worker reading the bus, in order
        return [await fanout.apply(change) for change in CHANGES]

    slow_run = asyncio.ensure_future(consume(workers[0]))
    await within(slow.refreshing.wait())  # the slow worker holds the first change
    fast_run = asyncio.ensure_future(consume(workers[1]))
    await within(fast_events.held.wait())  # the fast one asked for it and must wait its turn
    slow.gate.set()
    written = await within(asyncio.gather(slow_run, fast_run))
    assert written[0][0] == 1 and written[1][0] == 0  # the first change was the slow one's
    assert sum(map(sum, written)) == 3  # each change written once

    listener = make_event_store().listen(session.id, STANDALONE_STREAM)
    try:
        got = [(await within(anext(listener))).message["method"] for _ in CHANGES]
    finally:
        await listener.aclose()  # type: ignore[attr-defined]
    assert got == [f"notifications/{c['kind']}/list_changed" for c in CHANGES]
