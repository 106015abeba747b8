"""Virtual servers on a fleet (issue 39 "Show"): two worker processes (A and B) over one PostgreSQL
database and one private Redis, serving ``/mcp/a`` and ``/mcp/b``.

- an edit of a tool in ``a``'s selection gives ``a``'s GET streams ``tools/list_changed`` on both
  workers, and ``b``'s streams nothing;
- adding a tool to ``b``'s selection (an edit of the server row) reaches ``b``'s streams, and ``b``
  lists it at once;
- a session of ``a`` is unknown on ``b`` (404 for POST, GET and DELETE), on any worker;
- ``Last-Event-ID`` replay is per endpoint: ``a``'s stream resumed on the other worker gets what it
  missed; the same id on ``b`` is 404.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack
from dataclasses import dataclass

import httpx
import pytest

from tests.support import REGISTRY_PROVIDER, LiveServer
from tests.support.fleets import Fleet, running_fleet
from tests.support.mcp_http import (
    next_comment,
    next_data,
    open_session,
    request,
    session_headers,
    sse_events,
    stream_headers,
)
from tests.support.postgres import temporary_database
from tests.support.private_redis import have_redis_server

pytestmark = [
    pytest.mark.timeout(120),
    pytest.mark.skipif(not have_redis_server(), reason="needs redis-server and redis-cli"),
]
WAIT = 10.0  # s: the deadline of every wait for something the fleet does by itself
SETUP = """
from registry.models import Tool, VirtualServer
for name, tags in (('vs_alpha', ['team-a']), ('vs_beta', []), ('vs_gamma', [])):
    Tool.objects.create(name=name, description=name, kind='template', template_text='hi from ' + name,
                        input_schema={'type': 'object', 'properties': {}}, tags=tags)
VirtualServer.objects.create(slug='a', name='Team A', instructions='for team a', include_tags=['team-a'])
VirtualServer.objects.create(slug='b', name='Team B', tools=['vs_beta'])
"""
EDIT_ALPHA = (
    "from registry.models import Tool; t = Tool.objects.get(name='vs_alpha'); "
    "t.description = '{text}'; t.save()"
)
ADD_GAMMA_TO_B = (
    "from registry.models import VirtualServer; s = VirtualServer.objects.get(slug='b'); "
    "s.tools = s.tools + ['vs_gamma']; s.save()"
)
LIST_CHANGED = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}


@dataclass
class Pair:
    fleet: Fleet
    a: LiveServer
    b: LiveServer

    def shell(self, code: str) -> None:
        self.fleet.manage("shell", "-c", code)


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pair]:
    with (
        temporary_database("mcpsite_virtual") as database_url,
        running_fleet(tmp_path_factory.mktemp("redis"), provider=REGISTRY_PROVIDER,
                      database_url=database_url) as fleet,
    ):
        fleet.migrate()
        fleet.manage("shell", "-c", SETUP)
        a, b = fleet.start(2)
        yield Pair(fleet, a, b)


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=WAIT) as c:
        yield c


def on(worker: LiveServer, slug: str) -> str:
    return f"{worker.base_url}/mcp/{slug}"


async def tool_names(client: httpx.AsyncClient, url: str, session_id: str) -> list[str]:
    listed = await client.post(url, headers=session_headers(session_id), json=request(9, "tools/list"))
    assert listed.status_code == 200, listed.text
    return [t["name"] for t in listed.json()["result"]["tools"]]


async def test_each_endpoint_is_its_own_server(pair: Pair, client: httpx.AsyncClient) -> None:
    for worker in (pair.a, pair.b):
        started = await client.post(
            on(worker, "a"),
            headers={"Accept": "application/json, text/event-stream", "Content-Type": "application/json"},
            json=request(1, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                           "clientInfo": {"name": "t", "version": "1"}}),
        )
        assert started.status_code == 200, started.text
        result = started.json()["result"]
        assert result["serverInfo"]["name"] == "Team A"
        assert result["instructions"] == "for team a"
    session_a = await open_session(client, on(pair.a, "a"))
    session_b = await open_session(client, on(pair.b, "b"))
    assert await tool_names(client, on(pair.b, "a"), session_a) == ["vs_alpha"]
    assert "vs_beta" in await tool_names(client, on(pair.a, "b"), session_b)
    assert "vs_alpha" not in await tool_names(client, on(pair.a, "b"), session_b)
    refused = await client.post(on(pair.a, "b"), headers=session_headers(session_b),
                                json=request(3, "tools/call", {"name": "vs_alpha", "arguments": {}}))
    assert refused.status_code == 200
    assert "error" in refused.json() or refused.json()["result"].get("isError")


async def test_a_session_of_a_is_unknown_on_b(pair: Pair, client: httpx.AsyncClient) -> None:
    session_a = await open_session(client, on(pair.a, "a"))
    for worker in (pair.a, pair.b):
        posted = await client.post(on(worker, "b"), headers=session_headers(session_a),
                                   json=request(2, "ping"))
        assert posted.status_code == 404
        assert posted.json()["error"]["code"] < 0
        got = await client.get(on(worker, "b"), headers=stream_headers(session_a))
        assert got.status_code == 404
        deleted = await client.delete(on(worker, "b"), headers=session_headers(session_a))
        assert deleted.status_code == 404
        on_catch_all = await client.post(worker.url, headers=session_headers(session_a),
                                         json=request(2, "ping"))
        assert on_catch_all.status_code == 404
    still = await client.post(on(pair.b, "a"), headers=session_headers(session_a), json=request(3, "ping"))
    assert still.status_code == 200, still.text


async def test_an_edit_reaches_only_the_endpoints_whose_view_it_changes(
    pair: Pair, client: httpx.AsyncClient
) -> None:
    async with AsyncExitStack() as streams:
        events: dict[str, list[AsyncIterator]] = {"a": [], "b": []}
        for slug in ("a", "b"):
            for worker in (pair.a, pair.b):
                session_id = await open_session(client, on(worker, slug))
                stream = await streams.enter_async_context(
                    client.stream("GET", on(worker, slug), headers=stream_headers(session_id))
                )
                assert stream.status_code == 200
                events[slug].append(sse_events(stream))
                await next_comment(events[slug][-1])  # live
        await asyncio.to_thread(pair.shell, EDIT_ALPHA.format(text=uuid.uuid4().hex))
        for stream_events in events["a"]:
            announced = await next_data(stream_events, WAIT)
            assert announced.message == LIST_CHANGED
        for stream_events in events["b"]:
            # Quiet: only keepalive comments, no data, for a few keepalives after a's were told.
            for _ in range(3):
                await next_comment(stream_events)

        await asyncio.to_thread(pair.shell, ADD_GAMMA_TO_B)
        for stream_events in events["b"]:
            methods = set()
            while "notifications/tools/list_changed" not in methods:
                methods.add((await next_data(stream_events, WAIT)).message["method"])
        for stream_events in events["a"]:
            for _ in range(3):
                await next_comment(stream_events)
    session_b = await open_session(client, on(pair.a, "b"))
    assert "vs_gamma" in await tool_names(client, on(pair.a, "b"), session_b)


async def test_replay_is_per_endpoint(pair: Pair, client: httpx.AsyncClient) -> None:
    session_a = await open_session(client, on(pair.a, "a"))
    async with client.stream("GET", on(pair.a, "a"), headers=stream_headers(session_a)) as stream:
        events = sse_events(stream)
        await next_comment(events)
        await asyncio.to_thread(pair.shell, EDIT_ALPHA.format(text=uuid.uuid4().hex))
        first = await next_data(events, WAIT)
        assert first.message == LIST_CHANGED and first.id
    # Missed while disconnected: a second edit, then a resume on the other worker.
    await asyncio.to_thread(pair.shell, EDIT_ALPHA.format(text=uuid.uuid4().hex))
    await asyncio.sleep(1.0)
    wrong = await client.get(on(pair.b, "b"), headers=stream_headers(session_a, first.id))
    assert wrong.status_code == 404
    async with client.stream("GET", on(pair.b, "a"), headers=stream_headers(session_a, first.id)) as resumed:
        assert resumed.status_code == 200
        replayed = await next_data(sse_events(resumed), WAIT)
        assert replayed.message == LIST_CHANGED
