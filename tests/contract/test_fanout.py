"""Change fan-out (mcp_protocol/fanout/) across two workers sharing one store, on memory and on
Redis: each change is written once, and changes reach every stream in bus (commit) order even when
the worker writing an earlier change is slower than the one that could write the next; a key's
grant change is written the same way, and taken over from a writer that died midway too."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from mcp_protocol.auth.access import DEFAULTS, Access
from mcp_protocol.bus.memory import MemoryBus
from mcp_protocol.fanout import KINDS, Fanout, change_key
from mcp_protocol.memory_provider import MemoryProvider
from mcp_protocol.session import Session
from mcp_protocol.stores.claims import Claim, ClaimStore
from mcp_protocol.stores.events import STANDALONE_STREAM, EventStore
from mcp_protocol.stores.sessions import SessionStore
from tests.support.polling import within

CHANGES = [{"id": f"order-{kind}", "kind": kind, "uris": []} for kind in ("tools", "prompts", "resources")]


class HeldClaims(ClaimStore):
    """Forwards to a real claim store; sets ``held`` once a ``claim_once`` was answered HELD."""

    def __init__(self, inner: ClaimStore, held: asyncio.Event) -> None:
        self.inner, self.held = inner, held

    async def claim_once(self, key: str, lease: float) -> Claim:
        claim = await self.inner.claim_once(key, lease)
        if claim is Claim.HELD:
            self.held.set()
        return claim

    # The other abstract methods, forwarded.
    async def renew_once(self, keys: list[str], lease: float) -> set[str]:
        return await self.inner.renew_once(keys, lease)

    async def finish_once(self, key: str, ttl: float) -> None:
        await self.inner.finish_once(key, ttl)

    async def claim_stream(self, *args: Any, **kwargs: Any) -> bool:
        return await self.inner.claim_stream(*args, **kwargs)

    async def refresh_stream(self, *args: Any) -> bool:
        return await self.inner.refresh_stream(*args)

    async def release_stream(self, *args: Any) -> None:
        await self.inner.release_stream(*args)

    async def open_streams(self, session_ids: list[str]) -> set[str]:
        return await self.inner.open_streams(session_ids)


class Watched(EventStore):
    """Forwards to a real store; sets ``held`` once a claim was answered HELD; its broadcasts
    announce themselves (``writing``) and wait for ``gate`` (a writer slowed down midway)."""

    def __init__(self, inner: EventStore) -> None:
        self.inner = inner
        self.held, self.writing, self.gate = asyncio.Event(), asyncio.Event(), asyncio.Event()
        self.gate.set()
        self.claims = HeldClaims(inner.claims, self.held)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    # The abstract methods, forwarded.
    async def append(self, *args: Any) -> str:
        return await self.inner.append(*args)

    def listen(self, *args: Any, **kwargs: Any) -> Any:
        return self.inner.listen(*args, **kwargs)

    async def delete_session(self, session_id: str) -> None:
        await self.inner.delete_session(session_id)

    async def broadcast(self, *args: Any, **kwargs: Any) -> int:
        self.writing.set()
        await self.gate.wait()
        return await self.inner.broadcast(*args, **kwargs)

    async def tagged(self, *args: Any) -> set[str]:
        return await self.inner.tagged(*args)


async def test_changes_reach_a_stream_in_bus_order_when_the_first_writer_is_slow(
        make_event_store: Callable[..., EventStore], make_session_store: Callable[..., SessionStore]) -> None:
    session = Session.create()
    session.state = "ready"
    await make_session_store().create(session)
    slow_events, fast_events = Watched(make_event_store()), Watched(make_event_store())
    slow_events.gate.clear()
    workers = [Fanout(MemoryProvider(), make_session_store(), slow_events, MemoryBus()),
               Fanout(MemoryProvider(), make_session_store(), fast_events, MemoryBus())]

    async def consume(fanout: Fanout) -> list[int]:  # one worker reading the bus, in order
        return [await fanout.apply(change) for change in CHANGES]

    slow_run = asyncio.ensure_future(consume(workers[0]))
    await within(slow_events.writing.wait())  # the slow worker is writing the first change
    fast_run = asyncio.ensure_future(consume(workers[1]))
    await within(fast_events.held.wait())  # the fast one asked for it and must wait its turn
    slow_events.gate.set()
    written = await within(asyncio.gather(slow_run, fast_run))
    assert written[0][0] == 1 and written[1][0] == 0  # the first change was the slow one's
    assert sum(map(sum, written)) == 3  # each change written once

    listener = make_event_store().listen(session.id, STANDALONE_STREAM)
    try:
        got = [(await within(anext(listener))).message["method"] for _ in CHANGES]
    finally:
        await listener.aclose()  # type: ignore[attr-defined]
    assert got == [f"notifications/{c['kind']}/list_changed" for c in CHANGES]


async def test_a_change_whose_writer_died_midway_is_completed_once_per_session(
        make_event_store: Callable[..., EventStore], make_session_store: Callable[..., SessionStore]) -> None:
    sessions = [Session.create() for _ in range(4)]
    for session in sessions:
        session.state = "ready"
        await make_session_store().create(session)
    change = {"id": "half-done", "kind": "tools", "uris": []}
    key = change_key(change)
    # The dead writer: it won the change, reached two sessions, and never finished.
    dead = make_event_store()
    assert await dead.claims.claim_once(key, 0.2) is Claim.WON
    note = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
    await dead.broadcast([sessions[0].id, sessions[1].id], STANDALONE_STREAM, note, tag=f"{key}|list:tools")
    survivor = Fanout(MemoryProvider(), make_session_store(), make_event_store(), MemoryBus(), lease=0.2)
    assert await within(survivor.apply(change)) == 2  # after the lease lapsed: the other two only
    for session in sessions:
        listener = make_event_store().listen(session.id, STANDALONE_STREAM)
        try:
            assert (await within(anext(listener))).message == note
            assert await nothing_more(listener)
        finally:
            await listener.aclose()  # type: ignore[attr-defined]


async def nothing_more(listener: Any) -> bool:
    try:
        await asyncio.wait_for(anext(listener), 0.2)  # a duplicate would already be in the log
    except TimeoutError:
        return True
    return False


async def test_a_writer_slower_than_its_lease_keeps_its_part_and_nothing_is_written_twice(
        make_event_store: Callable[..., EventStore], make_session_store: Callable[..., SessionStore]) -> None:
    session = Session.create()
    session.state = "ready"
    await make_session_store().create(session)
    change = {"id": "slow-writer", "kind": "tools", "uris": []}
    slow_events = Watched(make_event_store())
    slow_events.gate.clear()
    lease = 0.3
    slow = Fanout(MemoryProvider(), make_session_store(), slow_events, MemoryBus(), lease=lease)
    other = Fanout(MemoryProvider(), make_session_store(), make_event_store(), MemoryBus(), lease=lease)
    slow_run = asyncio.ensure_future(slow.apply(change))
    await within(slow_events.writing.wait())  # the slow worker holds the session's part
    other_run = asyncio.ensure_future(other.apply(change))
    await asyncio.sleep(lease * 5)  # held five leases long: renewed, so never retaken
    assert not other_run.done()  # still waiting for the slow worker's part
    slow_events.gate.set()
    assert await within(asyncio.gather(slow_run, other_run)) == [1, 0]
    listener = make_event_store().listen(session.id, STANDALONE_STREAM)
    try:
        assert (await within(anext(listener))).message["method"] == "notifications/tools/list_changed"
        assert await nothing_more(listener)
    finally:
        await listener.aclose()  # type: ignore[attr-defined]


async def test_a_scope_change_whose_writer_died_midway_still_reaches_every_session_of_the_key_once(
        make_event_store: Callable[..., EventStore], make_session_store: Callable[..., SessionStore]) -> None:
    mine = [Session.create(principal="key:1") for _ in range(4)]
    other = Session.create(principal="key:2")
    for session in [*mine, other]:
        session.state = "ready"
        await make_session_store().create(session)
    key = "access:grant-1"
    # The dead writer: it won the grant change, told two sessions tools changed, and never finished.
    dead = make_event_store()
    assert await dead.claims.claim_once(key, 0.2) is Claim.WON
    tools = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
    await dead.broadcast([mine[0].id, mine[1].id], STANDALONE_STREAM, tools, tag=f"{key}|list:tools")
    survivor = Access({**DEFAULTS, "MODE": "open"}, MemoryBus(), make_session_store(), make_event_store())
    try:
        await survivor.scope_changed("grant-1", {"key:1"})  # retaken once the dead lease lapsed
        for session in mine:
            listener = make_event_store().listen(session.id, STANDALONE_STREAM)
            try:
                got = [(await within(anext(listener))).message["method"] for _ in KINDS]
                assert sorted(got) == sorted(f"notifications/{kind}/list_changed" for kind in KINDS)
                assert await nothing_more(listener)
            finally:
                await listener.aclose()  # type: ignore[attr-defined]
        listener = make_event_store().listen(other.id, STANDALONE_STREAM)
        try:
            assert await nothing_more(listener)  # another key's session heard nothing
        finally:
            await listener.aclose()  # type: ignore[attr-defined]
    finally:
        await survivor.close()
