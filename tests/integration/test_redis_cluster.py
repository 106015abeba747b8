"""``/mcp`` on a Redis Cluster: a real uvicorn server (two workers) whose session store, event
store and bus all live on a private three-master Redis Cluster (``MCP_REDIS_MODE=cluster``,
``REDIS_URL`` = one seed node).

Issue 5, build 6: every multi-key operation (session claims, append blocks, the live tail's
XREAD per bucket) stays within one hash slot, so the whole request path works on a Cluster:
initialize, tools/call, a GET stream that receives a ``list_changed`` published on the bus, and
a resume with ``Last-Event-ID`` that replays exactly what the client missed.

Also: the stores and the bus follow a Cluster failover (a master killed, its replica promoted).

Skipped without redis-server.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from mcp_protocol.bus.base import CHANGES
from mcp_protocol.bus.redis import RedisBus
from mcp_protocol.session import Session
from mcp_protocol.store_errors import StoreUnavailable
from tests.support import MEMORY_PROVIDER, LiveServer
from tests.support.mcp_http import (
    next_comment,
    next_data,
    open_session,
    request,
    session_headers,
    sse_events,
)
from tests.support.polling import eventually
from tests.support.private_redis import have_redis_server
from tests.support.redis_topologies import PrivateCluster
from tests.support.redis_workers import redis_workers
from tests.support.subscriptions import anext_message

pytestmark = [
    pytest.mark.timeout(60),
    pytest.mark.skipif(not have_redis_server(), reason="needs redis-server and redis-cli"),
]
PREFIX = f"mcpcl-{uuid.uuid4().hex[:8]}"
WAIT = 10.0  # s: the deadline of every wait for something the server does by itself
FAILOVER = 20.0  # s: a replica promoted, and the clients on it (a failover has no event to wait on)
LIST_CHANGED = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrivateCluster]:
    redis_cluster = PrivateCluster(Path(tmp_path_factory.mktemp("cluster"))).start()
    try:
        yield redis_cluster
    finally:
        redis_cluster.stop()


@pytest.fixture(scope="module")
def live(cluster: PrivateCluster) -> Iterator[LiveServer]:
    env = {"REDIS_URL": cluster.url, "MCP_REDIS_MODE": "cluster", "MCP_KEY_PREFIX": PREFIX,
           "MCP_KEEPALIVE_SECONDS": "0.5"}
    server = LiveServer(provider=MEMORY_PROVIDER, env=env, workers=2).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    # No keep-alive: each request is a new connection, so it may land on either worker.
    async with httpx.AsyncClient(timeout=WAIT, limits=httpx.Limits(max_keepalive_connections=0)) as c:
        yield c


@pytest.fixture
async def bus(cluster: PrivateCluster) -> AsyncIterator[RedisBus]:
    redis_bus = RedisBus(url=cluster.url, mode="cluster", prefix=PREFIX)
    try:
        yield redis_bus
    finally:
        await redis_bus.close()


def get_headers(session_id: str, last_event_id: str | None = None) -> dict[str, str]:
    headers = {**session_headers(session_id), "accept": "text/event-stream"}
    if last_event_id:
        headers["last-event-id"] = last_event_id
    return headers






async def change(bus: RedisBus) -> None:
    await bus.publish(CHANGES, {"id": uuid.uuid4().hex, "kind": "tools", "uris": []})


async def test_a_session_on_a_redis_cluster_calls_tools_gets_changes_and_resumes_its_stream(
    live: LiveServer, client: httpx.AsyncClient, bus: RedisBus
) -> None:
    session_id = await open_session(client, live.url)
    call = request(1, "tools/call", {"name": "echo", "arguments": {"message": "hello cluster"}})
    called = await client.post(live.url, headers=session_headers(session_id), json=call)
    assert called.status_code == 200, called.text
    result: dict[str, Any] = called.json()["result"]
    assert result["content"][0]["text"] == "hello cluster"

    async with client.stream("GET", live.url, headers=get_headers(session_id)) as stream:
        assert stream.status_code == 200
        events = sse_events(stream)
        await next_comment(events)  # the stream is live (its tail registered)
        await change(bus)
        first = await next_data(events)
        assert first.message == LIST_CHANGED and first.id is not None
    # Published while the client is away: kept in the session's stream on the Cluster.
    await change(bus)
    await change(bus)

    async with client.stream("GET", live.url, headers=get_headers(session_id, first.id)) as stream:
        assert stream.status_code == 200
        events = sse_events(stream)
        missed = [await next_data(events), await next_data(events)]
        await next_comment(events)  # and nothing more: no duplicate
        # A second GET of the session while this one is open: 409 (the claim on the Cluster).
        async with asyncio.timeout(WAIT):
            async with client.stream("GET", live.url, headers=get_headers(session_id)) as second:
                assert second.status_code == 409
        await next_comment(events)
    assert [e.message for e in missed] == [LIST_CHANGED, LIST_CHANGED]
    ids = [first.id, *(e.id for e in missed)]
    assert len(set(ids)) == 3


@pytest.fixture
def replicated_cluster(tmp_path: Path) -> Iterator[PrivateCluster]:
    redis_cluster = PrivateCluster(tmp_path, replicas=1).start()
    try:
        yield redis_cluster
    finally:
        redis_cluster.stop()


async def test_stores_and_bus_follow_a_cluster_failover_to_the_promoted_replica(
    replicated_cluster: PrivateCluster,
) -> None:
    # A master dies; the Cluster promotes its replica. The hot-path client reloads its slot map
    # (CLUSTER SLOTS from a live node), redis-py's client does the same, and the bus moves its
    # pub/sub connection off the dead node: all by themselves, no restart.
    redis_cluster = replicated_cluster
    options = {"url": redis_cluster.url, "mode": "cluster", "prefix": "fo", "socket_timeout": 1.0}
    async with redis_workers(**options) as workers:
        sessions, events = workers.sessions, workers.events
        bus, other_worker = workers.bus, workers.other_worker
        doomed = redis_cluster.master_of("fo:changes")  # the bus's pub/sub node
        session = Session.create("alice")
        while {redis_cluster.master_of(sessions._key(session.id)),
               redis_cluster.master_of(events._streams(session.id))} != {doomed}:
            session = Session.create("alice")  # one whose keys all live on the doomed master
        await sessions.create(session)
        before = await events.append(session.id, "r1", {"n": 0})
        sub = await bus.subscribe("changes")
        await other_worker.publish("changes", {"n": "before"})
        assert await asyncio.wait_for(anext(aiter(sub)), WAIT) == {"n": "before"}

        await asyncio.to_thread(redis_cluster.kill_master_of, "fo:changes")

        async def served_again() -> bool:
            try:
                return await sessions.load(session.id) == session
            except StoreUnavailable:
                return False

        await eventually(served_again, seconds=FAILOVER, step=0.1)
        after = await events.append(session.id, "r1", {"n": 1})
        resumed = events.listen(session.id, "r1", after=before)
        assert (await asyncio.wait_for(anext(resumed), WAIT)).id == after
        await resumed.aclose()  # type: ignore[attr-defined]
        assert await events.claims.claim_stream(session.id, "w", 5)

        received = asyncio.ensure_future(anext_message(sub))  # after the RESYNC of the reconnect

        async def bus_hears_again() -> bool:
            await other_worker.publish("changes", {"n": "after"})
            await asyncio.wait([received], timeout=0.2)
            return received.done()

        await eventually(bus_hears_again, seconds=FAILOVER, step=0.1)
        assert received.result() == {"n": "after"}
        await sub.close()
