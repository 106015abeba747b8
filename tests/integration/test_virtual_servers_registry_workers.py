"""Issue 39 end to end from the registry: two worker processes (A and B) sharing one PostgreSQL
database and one private Redis, the demo registry loaded (its servers ``docs``: what is tagged
``docs``; ``ops``: tools by name, the ``docs`` tag excluded).

An edit of a tool in ``docs`` (a shell save: the change's bus message names the endpoints its
selection reaches, ``registry/changes/reach.py``) gives ``/mcp/docs``'s stream on A and ``/mcp``'s
on B ``notifications/tools/list_changed`` and ``/mcp/ops``'s none; an edit of the ``ops`` server's
own selection reaches ``/mcp/ops`` only. Needs the core's per-endpoint serving
(``mcp_protocol.endpoint_servers``), PostgreSQL on 127.0.0.1:5432 and redis-server.
"""

from __future__ import annotations

import asyncio
import importlib.util
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack
from dataclasses import dataclass

import httpx
import pytest

from tests.support import REGISTRY_PROVIDER, LiveServer
from tests.support.fleets import Fleet, running_fleet
from tests.support.mcp_http import next_comment, next_data, open_session, sse_events, stream_headers
from tests.support.postgres import temporary_database
from tests.support.private_redis import have_redis_server

pytestmark = [
    pytest.mark.timeout(120),
    pytest.mark.skipif(not have_redis_server(), reason="needs redis-server and redis-cli"),
    pytest.mark.skipif(importlib.util.find_spec("mcp_protocol.endpoint_servers") is None,
                       reason="needs the core's serving of /mcp/<slug> (issue 39)"),
]
WAIT = 10.0  # s: the deadline of every wait for something the fleet does by itself
EDIT_ECHO = ("from registry.models import Tool; t = Tool.objects.get(name='echo'); "
             "t.description = 'edited'; t.save()")
GROW_OPS = ("from registry.models import VirtualServer; s = VirtualServer.objects.get(slug='ops'); "
            "s.tools = [*s.tools, 'fail']; s.save()")


@dataclass
class Pair:
    fleet: Fleet
    a: LiveServer
    b: LiveServer


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pair]:
    with (
        temporary_database("mcpsite_vs_registry") as database_url,
        running_fleet(tmp_path_factory.mktemp("redis"), provider=REGISTRY_PROVIDER,
                      database_url=database_url) as fleet,
    ):
        fleet.migrate()
        fleet.manage("load_demo")
        a, b = fleet.start(2)
        yield Pair(fleet, a, b)


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=WAIT) as c:
        yield c


async def test_an_edit_reaches_the_streams_of_the_servers_that_select_it_and_a_servers_edit_its_own(
    pair: Pair, client: httpx.AsyncClient
) -> None:
    urls = {"docs": f"{pair.a.base_url}/mcp/docs", "ops": f"{pair.b.base_url}/mcp/ops", "all": pair.b.url}
    async with AsyncExitStack() as streams:
        events = {}
        for name, url in urls.items():
            session_id = await open_session(client, url)
            stream = await streams.enter_async_context(
                client.stream("GET", url, headers=stream_headers(session_id)))
            assert stream.status_code == 200, name
            events[name] = sse_events(stream)
            await next_comment(events[name])  # live
        await asyncio.to_thread(pair.fleet.manage, "shell", "-c", EDIT_ECHO)
        for name in ("docs", "all"):
            announced = await next_data(events[name], WAIT)
            assert announced.message == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
        for _ in range(2):  # ops's streams were not written to: keep-alives only
            await next_comment(events["ops"])
        # The ops server's own selection grows: every list of /mcp/ops, nothing on /mcp/docs.
        await asyncio.to_thread(pair.fleet.manage, "shell", "-c", GROW_OPS)
        announced = await next_data(events["ops"], WAIT)
        assert announced.message == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
        for _ in range(2):
            await next_comment(events["docs"])
