"""Keeping an upstream current across a fleet (issue 40 item 3): two worker processes (A and B)
sharing one PostgreSQL database and one private Redis, and an upstream of the official Python SDK
that adds and removes a tool at runtime (``tests/support/changing_upstream.py``).

One worker holds the upstream's listen stream under a lease (``registry/upstreams/keeper.py``);
the upstream's ``list_changed`` becomes a sync, the sync a change set, the change set a
``notifications/tools/list_changed`` on both workers' GET streams, removals included. The holder
killed -9, the other worker takes the lease over and a later change still arrives. Skipped without
PostgreSQL on 127.0.0.1:5432 or without redis-server.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass

import httpx
import pytest
import redis

from tests.support import REGISTRY_PROVIDER, LiveServer
from tests.support.changing_upstream import ChangingUpstream
from tests.support.fleets import Fleet, kill9, running_fleet
from tests.support.mcp_http import (
    SSEEvent,
    next_comment,
    next_data,
    open_session,
    request,
    session_headers,
    sse_events,
    stream_headers,
)
from tests.support.polling import eventually
from tests.support.postgres import temporary_database
from tests.support.private_redis import have_redis_server

pytestmark = [
    pytest.mark.timeout(90),
    pytest.mark.skipif(not have_redis_server(), reason="needs redis-server and redis-cli"),
]
LEASE = 2.0  # s: REGISTRY_UPSTREAM_LISTEN_LEASE of the workers
WAIT = 10.0  # s: the deadline of every wait for something the fleet does by itself
Stream = tuple[str, AsyncIterator[SSEEvent]]  # a session id and its GET stream's events
LIST_CHANGED = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}


@dataclass
class Setup:
    fleet: Fleet
    upstream: ChangingUpstream
    a: LiveServer
    b: LiveServer

    def holder(self) -> LiveServer | None:
        """The worker whose owner id is on the listen lease in Redis (``<host>:<pid>:<nonce>``)."""
        client = redis.Redis.from_url(self.fleet.redis.url, decode_responses=True)
        with contextlib.closing(client):
            for key in client.scan_iter(match="*upstream-listen:*"):
                owner = client.get(key)
                for worker in (self.a, self.b):
                    assert worker.process is not None
                    if owner and owner.split(":")[1] == str(worker.process.pid):
                        return worker
        return None


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    with (
        ChangingUpstream() as upstream,
        temporary_database("mcpsite_uplisten") as database_url,
        running_fleet(
            tmp_path_factory.mktemp("redis"),
            provider=REGISTRY_PROVIDER,
            database_url=database_url,
            REGISTRY_HTTP_ALLOWED_HOSTS="127.0.0.1",
            REGISTRY_UPSTREAM_LISTEN_LEASE=str(LEASE),
            REGISTRY_UPSTREAM_LISTEN_DEBOUNCE="0.2",
            REGISTRY_UPSTREAM_SYNC_TICK="0",  # no periodic sync: every change here comes by the stream
        ) as fleet,
    ):
        fleet.migrate()
        fleet.manage("shell", "-c", "from registry.models import Upstream; Upstream.objects.create("
                     f"name='changing', prefix='ch', url={upstream.url!r}, transport='streamable-http', "
                     "timeout=5.0, connect_timeout=2.0)")
        a, b = fleet.start(2)
        yield Setup(fleet, upstream, a, b)


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=WAIT) as c:
        yield c


async def _tools(client: httpx.AsyncClient, worker: LiveServer, session_id: str) -> set[str]:
    listed = await client.post(worker.url, headers=session_headers(session_id), json=request(1, "tools/list"))
    assert listed.status_code == 200, listed.text
    return {tool["name"] for tool in listed.json()["result"]["tools"]}


@contextlib.asynccontextmanager
async def _streams(client: httpx.AsyncClient, *workers: LiveServer) -> AsyncIterator[list[Stream]]:
    """A session and its live GET stream on each of ``workers``."""
    async with contextlib.AsyncExitStack() as stack:
        out = []
        for worker in workers:
            session_id = await open_session(client, worker.url)
            stream = await stack.enter_async_context(
                client.stream("GET", worker.url, headers=stream_headers(session_id)))
            assert stream.status_code == 200
            events = sse_events(stream)
            await next_comment(events)  # live
            out.append((session_id, events))
        yield out


async def _announced(client: httpx.AsyncClient, worker: LiveServer, session_id: str,
                     events: AsyncIterator[SSEEvent], name: str, *, present: bool = True) -> None:
    """``list_changed`` on the stream, after which ``worker`` lists ``name`` (or no longer does). A
    sync that found nothing new announces nothing, but one racing the stream's own may announce
    first: the next announcement then carries it."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + WAIT
    while True:
        assert (await next_data(events, max(deadline - loop.time(), 0.1))).message == LIST_CHANGED
        if (name in await _tools(client, worker, session_id)) == present:
            return


async def test_an_upstream_tool_added_then_removed_reaches_clients_on_both_workers(
    setup: Setup, client: httpx.AsyncClient
) -> None:
    workers = (setup.a, setup.b)
    # The lease holder synced the upstream when its stream opened: both workers serve its tools.
    probe = [await open_session(client, w.url) for w in workers]

    async def mirrored() -> bool:
        return all(["ch_grow" in await _tools(client, w, s) for w, s in zip(workers, probe, strict=True)])

    await eventually(mirrored, WAIT, step=0.1)
    async with _streams(client, *workers) as streams:
        await setup.upstream.call("grow", name="extra")
        for worker, (session_id, events) in zip(workers, streams, strict=True):
            await _announced(client, worker, session_id, events, "ch_extra")
        await setup.upstream.call("shrink", name="extra")
        for worker, (session_id, events) in zip(workers, streams, strict=True):
            await _announced(client, worker, session_id, events, "ch_extra", present=False)
            assert "ch_echo" in await _tools(client, worker, session_id)  # the others stay


async def test_the_listen_stream_is_taken_over_when_its_worker_is_killed(
    setup: Setup, client: httpx.AsyncClient
) -> None:
    held: list[LiveServer] = []

    async def found() -> bool:
        holder = await asyncio.to_thread(setup.holder)
        held[:] = [holder] if holder is not None else []
        return bool(held)

    await eventually(found, WAIT, step=0.1)
    survivor = setup.b if held[0] is setup.a else setup.a
    kill9(held[0])
    async with _streams(client, survivor) as [(session_id, events)]:
        # Within the lease and a tick, the survivor holds the lease.
        await eventually(lambda: _held_by(setup, survivor), LEASE * 2 + 2, step=0.1)
        await setup.upstream.call("grow", name="later")
        await _announced(client, survivor, session_id, events, "ch_later")
        # Its stream is open by now (it opened before the sync that announced): a second change
        # can only come through it.
        await setup.upstream.call("grow", name="latest")
        await _announced(client, survivor, session_id, events, "ch_latest")


async def _held_by(setup: Setup, worker: LiveServer) -> bool:
    return await asyncio.to_thread(setup.holder) is worker
