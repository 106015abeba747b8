"""Registry changes on a fleet: two worker processes (A and B) sharing one PostgreSQL database and
one private Redis, with a short reconcile interval.

A change committed where no worker listens (a shell with another ``MCP_KEY_PREFIX``: its publish
never reaches the fleet, like a process killed between commit and publish) is found in the
database by every worker (``registry/reconcile.py``): GET streams on both workers get
``list_changed`` once, and both serve the new tool. Skipped without PostgreSQL on 127.0.0.1:5432
or without redis-server.
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
    pytest.mark.timeout(90),
    pytest.mark.skipif(not have_redis_server(), reason="needs redis-server and redis-cli"),
]
RECONCILE = 0.5  # s: REGISTRY_RECONCILE_SECONDS of the workers
WAIT = 10.0  # s: the deadline of every wait for something the fleet does by itself
ADD_TOOL = (
    "from registry.models import Tool; "
    "Tool.objects.create(name='{name}', description='d', kind='template', template_text='hi from {name}', "
    "input_schema={{'type': 'object', 'properties': {{}}}})"
)


@dataclass
class Pair:
    fleet: Fleet
    a: LiveServer
    b: LiveServer


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pair]:
    with (
        temporary_database("mcpsite_changes") as database_url,
        running_fleet(
            tmp_path_factory.mktemp("redis"),
            provider=REGISTRY_PROVIDER,
            database_url=database_url,
            REGISTRY_RECONCILE_SECONDS=str(RECONCILE),
        ) as fleet,
    ):
        fleet.manage("migrate", "--noinput")
        a, b = fleet.start(2)
        yield Pair(fleet, a, b)


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=WAIT) as c:
        yield c


async def test_a_change_published_under_another_key_prefix_reaches_every_worker_once(
    pair: Pair, client: httpx.AsyncClient
) -> None:
    name = f"unheard_{uuid.uuid4().hex[:6]}"
    async with AsyncExitStack() as streams:
        sessions, events = [], []
        for worker in (pair.a, pair.b):
            session_id = await open_session(client, worker.url)
            stream = await streams.enter_async_context(
                client.stream("GET", worker.url, headers=stream_headers(session_id))
            )
            assert stream.status_code == 200
            events.append(sse_events(stream))
            sessions.append(session_id)
            await next_comment(events[-1])  # live
        shell = ["shell", "-c", ADD_TOOL.format(name=name)]
        await asyncio.to_thread(pair.fleet.manage, *shell, MCP_KEY_PREFIX=f"elsewhere-{uuid.uuid4().hex[:8]}")
        for stream_events in events:
            # Within a few reconcile intervals (jittered), not at the next unrelated change.
            announced = await next_data(stream_events, 4 * RECONCILE + 2)
            assert announced.message == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
        for stream_events in events:
            await next_comment(stream_events)  # once: the workers that found it wrote it once
    for worker, session_id in zip((pair.a, pair.b), sessions, strict=True):
        called = await client.post(
            worker.url,
            headers=session_headers(session_id),
            json=request(2, "tools/call", {"name": name, "arguments": {}}),
        )
        assert called.status_code == 200, called.text
        assert called.json()["result"]["content"][0]["text"] == f"hi from {name}"
