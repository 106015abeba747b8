"""Fan-out per endpoint (issue 39 item 4; mcp_protocol/fanout/writer.py) across two workers
sharing one store, on memory, Redis, Cluster and Sentinel: a change naming endpoints is written to
the sessions of those endpoints only, and the sessions of the others are not even read; a change
naming none reaches every session; a virtual server's change is every list_changed for its
endpoint; exactly once across two writers, and after a writer died midway, as before.

Who got what is read back from the logs themselves: ``EventStore.tagged`` says which sessions hold
a change's entry, and the writers' counts say how many entries were written, so equal numbers mean
each of those sessions got it once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from mcp_protocol.bus.memory import MemoryBus
from mcp_protocol.changefeed import ChangeFeed
from mcp_protocol.endpoints import CATCH_ALL
from mcp_protocol.fanout import KINDS, ChangeWriter, Fanout, change_key
from mcp_protocol.fanout.notifications import Change
from mcp_protocol.memory_provider import MemoryProvider
from mcp_protocol.provider import ProviderCapabilities
from mcp_protocol.session import Session
from mcp_protocol.stores.claims import Claim, ClaimStore
from mcp_protocol.stores.events import STANDALONE_STREAM, EventStore
from mcp_protocol.stores.sessions import SessionStore
from tests.contract.test_fanout import HeldClaims, Watched
from tests.support.polling import within

CAPS = ProviderCapabilities()
RETAKE_WINDOW = 30.0
ENDPOINTS = ("a", "b", CATCH_ALL)


class Reading(SessionStore):
    """A worker's real session store, noting which sessions the writer reads (lists or checks)."""

    def __init__(self, inner: SessionStore) -> None:
        super().__init__()
        self.inner = inner
        self.read: set[str] = set()
        self.listed_everything = False

    async def session_ids(self) -> list[str]:
        self.listed_everything = True
        return await self.inner.session_ids()

    async def endpoint_session_ids(self, endpoint: str) -> list[str]:
        return await self.inner.endpoint_session_ids(endpoint)

    async def initialized_among(self, session_ids: list[str]) -> list[str]:
        self.read.update(session_ids)
        return await self.inner.initialized_among(session_ids)

    async def subscribers(self, uri: str) -> list[str]:
        return await self.inner.subscribers(uri)

    # The rest of the contract, forwarded (the writer does not call them).
    async def create(self, session: Session) -> None:
        await self.inner.create(session)

    async def load(self, session_id: str) -> Session | None:
        return await self.inner.load(session_id)

    async def save(self, session: Session) -> None:
        await self.inner.save(session)

    async def delete(self, session_id: str) -> bool:
        return await self.inner.delete(session_id)

    async def list_sessions(self, limit: int = 100, after: tuple[float, str] | None = None) -> list[Session]:
        return await self.inner.list_sessions(limit, after)

    async def count(self, principal: str | None = None) -> int:
        return await self.inner.count(principal)


async def sessions_on(store: SessionStore, count: int = 5) -> dict[str, list[str]]:
    """``count`` initialized sessions on each of a, b and the catch-all (a subscriber of demo://x
    among each)."""
    made: dict[str, list[str]] = {}
    for endpoint in ENDPOINTS:
        made[endpoint] = []
        for i in range(count):
            session = Session.create(endpoint=endpoint)
            session.state, session.protocol_version = "ready", "2025-11-25"
            if i == 0:
                session.subscriptions = {"demo://x"}
            await store.create(session)
            made[endpoint].append(session.id)
    return made


async def holders(events: EventStore, made: dict[str, list[str]], key: str, what: str) -> dict[str, set[str]]:
    """Per endpoint, its sessions whose standalone log holds the change ``key``'s entry ``what``."""
    tag = f"{key}|{what}"
    return {endpoint: await events.tagged(ids, STANDALONE_STREAM, tag, RETAKE_WINDOW)
            for endpoint, ids in made.items()}


async def write(message: dict[str, Any], *writers: ChangeWriter) -> int:
    """The change as every worker's listener writes it, side by side; how many entries in all."""
    key, change = change_key(message), Change.of(message)
    return sum(await within(asyncio.gather(*(w.write(key, change, CAPS) for w in writers))))


Makers = tuple[Callable[..., SessionStore], Callable[..., EventStore]]


@pytest.fixture
def stores(make_session_store: Callable[..., SessionStore],
           make_event_store: Callable[..., EventStore]) -> Makers:
    return make_session_store, make_event_store


async def test_a_change_naming_a_and_the_catch_all_is_written_to_their_sessions_only(stores: Makers) -> None:
    make_sessions, make_events = stores
    made = await sessions_on(make_sessions())
    workers = [Reading(make_sessions()), Reading(make_sessions())]
    writers = [ChangeWriter(w, make_events()) for w in workers]
    message = {"id": "ep-1", "kind": "tools", "uris": [], "endpoints": ["a", CATCH_ALL]}
    assert await write(message, *writers) == 10  # five on a, five on the catch-all, once each
    got = await holders(make_events(), made, change_key(message), "list:tools")
    assert got == {"a": set(made["a"]), "b": set(), CATCH_ALL: set(made[CATCH_ALL])}
    read = workers[0].read | workers[1].read
    assert read == set(made["a"]) | set(made[CATCH_ALL])  # b's sessions were never even read
    assert not (workers[0].listed_everything or workers[1].listed_everything)


async def test_a_change_naming_no_endpoint_is_written_to_every_session(stores: Makers) -> None:
    make_sessions, make_events = stores
    made = await sessions_on(make_sessions())
    writers = [ChangeWriter(make_sessions(), make_events()) for _ in range(2)]
    message = {"id": "ep-2", "kind": "prompts", "uris": []}
    assert await write(message, *writers) == 15
    got = await holders(make_events(), made, change_key(message), "list:prompts")
    assert got == {endpoint: set(ids) for endpoint, ids in made.items()}


async def test_a_servers_change_for_b_writes_every_list_changed_to_bs_sessions_only(stores: Makers) -> None:
    make_sessions, make_events = stores
    made = await sessions_on(make_sessions())
    writers = [ChangeWriter(make_sessions(), make_events()) for _ in range(2)]
    message = {"id": "ep-3", "kind": "servers", "uris": [], "endpoints": ["b"]}
    assert await write(message, *writers) == 5 * len(KINDS)
    for kind in KINDS:
        got = await holders(make_events(), made, change_key(message), f"list:{kind}")
        assert got == {"a": set(), "b": set(made["b"]), CATCH_ALL: set()}


async def test_resources_updated_reaches_the_subscribers_on_the_named_endpoints_only(stores: Makers) -> None:
    make_sessions, make_events = stores
    made = await sessions_on(make_sessions())
    writers = [ChangeWriter(make_sessions(), make_events()) for _ in range(2)]
    message = {"id": "ep-4", "kind": "resources", "uris": ["demo://x"], "endpoints": ["a"]}
    assert await write(message, *writers) == 5 + 1  # a's list_changed, and a's one subscriber
    got = await holders(make_events(), made, change_key(message), "demo://x")
    assert got == {"a": {made["a"][0]}, "b": set(), CATCH_ALL: set()}


async def test_a_change_for_a_whose_writer_died_midway_is_completed_once_and_never_reaches_b(
        stores: Makers) -> None:
    make_sessions, make_events = stores
    made = await sessions_on(make_sessions())
    message = {"id": "ep-5", "kind": "tools", "uris": [], "endpoints": ["a"]}
    key = change_key(message)
    # The dead writer: it won the change, reached two of a's sessions, and never finished.
    dead = make_events()
    assert await dead.claims.claim_once(key, 0.2) is Claim.WON
    note = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
    await dead.broadcast(made["a"][:2], STANDALONE_STREAM, note, tag=f"{key}|list:tools")
    survivors = [ChangeWriter(make_sessions(), make_events(), lease=0.2) for _ in range(2)]
    assert await write(message, *survivors) == 3  # after the lease lapsed: a's other three only
    got = await holders(make_events(), made, key, "list:tools")
    assert got == {"a": set(made["a"]), "b": set(), CATCH_ALL: set()}


async def test_every_workers_listener_writes_a_change_for_b_to_bs_sessions_and_bs_listen_streams_only(
        stores: Makers) -> None:
    # The whole path of a bus message on two workers (fanout/listener.py): snapshot rebuild, the
    # writer (once between them) and each worker's listen streams (its ChangeFeed).
    make_sessions, make_events = stores
    made = await sessions_on(make_sessions())
    feeds = [ChangeFeed(), ChangeFeed()]
    workers = [Fanout(MemoryProvider(), make_sessions(), make_events(), MemoryBus(), feed=feed)
               for feed in feeds]
    listening = {(n, endpoint): feed.subscribe("key:1", endpoint)
                 for n, feed in enumerate(feeds) for endpoint in ("a", "b")}
    message = {"id": "ep-6", "kind": "servers", "uris": [], "endpoints": ["b"]}
    written = await within(asyncio.gather(*(w.apply(message) for w in workers)))
    assert sum(written) == 5 * len(KINDS)
    for kind in KINDS:
        got = await holders(make_events(), made, change_key(message), f"list:{kind}")
        assert got == {"a": set(), "b": set(made["b"]), CATCH_ALL: set()}
    for (_, endpoint), subscription in listening.items():
        heard = await within(anext(aiter(subscription))) if endpoint == "b" else None
        assert heard == (message if endpoint == "b" else None)
        assert subscription._queue.empty()  # a's streams were never handed it


class PartHeldTwice(HeldClaims):
    """Sets ``waited`` once a part was answered HELD twice: the writer went through every part
    it could take once, and waits for one another writer holds."""

    def __init__(self, inner: ClaimStore, waited: asyncio.Event) -> None:
        super().__init__(inner, asyncio.Event())
        self.waited, self.times = waited, 0

    async def claim_once(self, key: str, lease: float) -> Claim:
        claim = await self.inner.claim_once(key, lease)
        if claim is Claim.HELD and key.rsplit("#", 1)[-1].isdigit():  # a part, not the change
            self.times += 1
            if self.times == 2:
                self.waited.set()
        return claim


async def test_a_helper_of_a_retaken_change_skips_the_sessions_the_dead_owner_reached(stores: Makers) -> None:
    # The new owner of a retaken change is held up in its first part; the other worker helps and
    # writes every other part. It must check them for what the dead owner wrote, as the owner does.
    make_sessions, make_events = stores
    sessions = []
    for _ in range(20):
        session = Session.create(endpoint="a")
        session.state = "ready"
        await make_sessions().create(session)
        sessions.append(session.id)
    message = {"id": "ep-7", "kind": "tools", "uris": [], "endpoints": ["a"]}
    key = change_key(message)
    dead = make_events()
    assert await dead.claims.claim_once(key, 0.2) is Claim.WON
    note = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
    await dead.broadcast(sessions[:-1], STANDALONE_STREAM, note, tag=f"{key}|list:tools")
    owner_events, helper_events = Watched(make_events()), Watched(make_events())
    owner_events.gate.clear()
    waited = asyncio.Event()
    helper_events.claims = PartHeldTwice(helper_events.inner.claims, waited)
    # The writers' leases outlast a loaded machine's stalls (renewed every third of one): a part
    # whose lease lapsed while its owner waits at the gate would be retaken by the helper, which
    # then never waits for it. Only the dead owner's claim must lapse quickly.
    owner = ChangeWriter(make_sessions(), owner_events, lease=1.5)
    helper = ChangeWriter(make_sessions(), helper_events, lease=1.5)
    change = Change.of(message)
    owning = asyncio.ensure_future(owner.write(key, change, CAPS))
    await within(owner_events.writing.wait())  # it retook the change and holds its first part
    helping = asyncio.ensure_future(helper.write(key, change, CAPS))
    await within(waited.wait())  # the helper went through every other part and waits for it
    owner_events.gate.set()
    assert sum(await within(asyncio.gather(owning, helping))) == 1  # the one session not reached
    got = await holders(make_events(), {"a": sessions}, key, "list:tools")
    assert got == {"a": set(sessions)}
