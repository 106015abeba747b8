"""The management API on a fleet: two worker processes (A and B, one uvicorn worker each, their
own ports) sharing one PostgreSQL database and one private Redis, each request sent to the worker
the test names.

A tool created through the API on A is announced on a GET stream held on B and callable there
(the write publishes after commit like an admin edit; every worker rebuilds its snapshot); a
session terminated through the API on A is a 404 on B, and its GET stream on B ends. Skipped
without PostgreSQL on 127.0.0.1:5432 or without redis-server.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass

import httpx
import pytest

from management_api.sessions import key_of
from tests.support import REGISTRY_PROVIDER, LiveServer
from tests.support.fleets import running_fleet
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
WAIT = 10.0  # s: the deadline of every wait for something the fleet does by itself
TOOL = {
    "name": "made_by_api",
    "kind": "template",
    "template_text": "Hello {{ who }} from the API",
    "input_schema": {"type": "object", "properties": {"who": {"type": "string"}}, "required": ["who"]},
}


@dataclass
class ApiPair:
    """Workers A and B, and a management token of the API."""

    a: LiveServer
    b: LiveServer
    token: str

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiPair]:
    with (
        temporary_database("mcpsite_api") as database_url,
        running_fleet(tmp_path_factory.mktemp("redis"), provider=REGISTRY_PROVIDER, database_url=database_url)
        as fleet,
    ):
        fleet.migrate()
        admin = ["createsuperuser", "--noinput", "--username", "ci", "--email", "ci@example.com"]
        fleet.manage(*admin, DJANGO_SUPERUSER_PASSWORD=uuid.uuid4().hex)
        token = fleet.manage("create_management_token", "--user", "ci", "--name", "fleet test").strip()
        a, b = fleet.start(2)
        yield ApiPair(a, b, token)


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=WAIT) as c:
        yield c


async def test_a_tool_created_through_the_api_on_a_is_announced_and_callable_on_b(
        fleet: ApiPair, client: httpx.AsyncClient) -> None:
    session_id = await open_session(client, fleet.b.url)
    async with client.stream("GET", fleet.b.url, headers=stream_headers(session_id)) as stream:
        assert stream.status_code == 200
        events = sse_events(stream)
        await next_comment(events)  # the stream is live on B
        created = await client.post(f"{fleet.a.base_url}/api/v1/tools/", json=TOOL, headers=fleet.auth)
        assert created.status_code == 201, created.text
        announced = await next_data(events, WAIT)
        assert announced.message == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
        await next_comment(events)  # once: nothing else follows
    called = await client.post(fleet.b.url, headers=session_headers(session_id), json=request(
        2, "tools/call", {"name": "made_by_api", "arguments": {"who": "B"}}))
    assert called.status_code == 200, called.text
    assert called.json()["result"]["content"][0]["text"] == "Hello B from the API"


async def test_a_session_terminated_through_the_api_on_a_is_a_404_on_b(
        fleet: ApiPair, client: httpx.AsyncClient) -> None:
    session_id = await open_session(client, fleet.b.url)
    async with client.stream("GET", fleet.b.url, headers=stream_headers(session_id)) as stream:
        assert stream.status_code == 200
        events = sse_events(stream)
        await next_comment(events)
        listed = await client.get(f"{fleet.a.base_url}/api/v1/sessions/", headers=fleet.auth)
        assert listed.status_code == 200
        [row] = [r for r in listed.json()["results"] if r["key"] == key_of(session_id)]
        assert row["standalone_stream"] is True and row["state"] == "ready"  # B's stream, seen from A
        assert session_id not in listed.text  # never shown whole
        ended = await client.delete(f"{fleet.a.base_url}/api/v1/sessions/{key_of(session_id)}/",
                                    headers=fleet.auth)
        assert ended.status_code == 204, ended.text
        # B's stream of the session ends by itself (its heartbeat finds the session gone).
        async with asyncio.timeout(WAIT):
            async for _ in events:
                pass
    answer = await client.post(fleet.b.url, headers=session_headers(session_id), json=request(3, "ping"))
    assert answer.status_code == 404
    again = await client.delete(f"{fleet.a.base_url}/api/v1/sessions/{key_of(session_id)}/",
                                headers=fleet.auth)
    assert again.status_code == 404
