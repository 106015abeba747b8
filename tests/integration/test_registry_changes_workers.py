"""Registry changes on a fleet: two worker processes (A and B) sharing one PostgreSQL database and
one private Redis, with a short reconcile interval.

A change committed where no worker listens (a shell with another ``MCP_KEY_PREFIX``: its publish
never reaches the fleet, like a process killed between commit and publish) is found in the
database by every worker (``registry/changes/reconcile.py``): GET streams on both workers get
``list_changed`` once, and both serve the new tool. Skipped without PostgreSQL on 127.0.0.1:5432
or without redis-server.

A revert through the management API on A is an ordinary edit: an SDK client connected to B gets
``notifications/tools/list_changed`` and lists the reverted tool.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack
from dataclasses import dataclass

import httpx
import pytest
from mcp import types
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

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
    token: str

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}


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
        fleet.migrate()
        admin = ["createsuperuser", "--noinput", "--username", "ci", "--email", "ci@example.com"]
        fleet.manage(*admin, DJANGO_SUPERUSER_PASSWORD=uuid.uuid4().hex)
        token = fleet.manage("create_management_token", "--user", "ci", "--name", "history").strip()
        a, b = fleet.start(2)
        yield Pair(fleet, a, b, token)


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


async def test_a_revert_on_a_reaches_an_sdk_client_on_b_as_list_changed(
    pair: Pair, client: httpx.AsyncClient
) -> None:
    api = f"{pair.a.base_url}/api/v1"
    made = await client.post(
        f"{api}/tools/",
        headers=pair.auth,
        json={"name": "reverted_tool", "kind": "template", "template_text": "x", "description": "first"},
    )
    assert made.status_code == 201, made.text
    tool_id = made.json()["id"]
    edited = await client.patch(f"{api}/tools/{tool_id}/", headers=pair.auth, json={"description": "second"})
    assert edited.status_code == 200
    first = (await client.get(f"{api}/history/tools/{tool_id}/", headers=pair.auth)).json()["results"][-1]
    changed = asyncio.Event()

    async def on_message(message: object) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    async with (
        asyncio.timeout(WAIT * 3),
        streamable_http_client(pair.b.url) as (read, write),
        ClientSession(read, write, message_handler=on_message) as session,
    ):
        await session.initialize()
        [before] = [t for t in (await session.list_tools()).tools if t.name == "reverted_tool"]
        assert before.description == "second"
        reverted = await client.post(
            f"{api}/history/tools/{tool_id}/{first['version']}/revert",
            headers={**pair.auth, "If-Match": edited.headers["ETag"]},
        )
        assert reverted.status_code == 200, reverted.text
        await asyncio.wait_for(changed.wait(), WAIT)
        [after] = [t for t in (await session.list_tools()).tools if t.name == "reverted_tool"]
        assert after.description == "first"
