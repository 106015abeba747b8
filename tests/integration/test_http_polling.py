"""SEP-1699 polling under daphne: the server closes a slow request's stream early, the client resumes.

[11] basic/transports.mdx "Resumability": after the priming event the server MAY close the
connection (after ``retry``); the client reconnects with GET + ``Last-Event-ID`` and gets the rest.
``MCP_CLOSE_STREAM_AFTER_SECONDS=0.3`` turns that on for every request running longer. This module
runs on daphne, which sends no ASGI lifespan events.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import httpx
import pytest
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from tests.support import MEMORY_PROVIDER, live_server_fixture
from tests.support.live_server import LiveServer
from tests.support.mcp_http import SSEEvent, open_session, request, session_headers, sse_events

pytestmark = pytest.mark.timeout(60)
live = live_server_fixture(
    provider=MEMORY_PROVIDER, server="daphne", env={"MCP_CLOSE_STREAM_AFTER_SECONDS": "0.3"}
)


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=10) as c:
        yield c


async def read_all(response: httpx.Response) -> list[SSEEvent]:
    async with asyncio.timeout(10):
        return [e async for e in sse_events(response)]


def slow(id: int, seconds: float = 1.0) -> dict[str, object]:
    return request(id, "tools/call", {"name": "slow", "arguments": {"seconds": seconds}})


async def test_slow_request_stream_is_closed_after_priming_and_retry(
    live: LiveServer, client: httpx.AsyncClient
) -> None:
    session_id = await open_session(client, live.url)
    headers = session_headers(session_id)
    async with client.stream("POST", live.url, headers=headers, json=slow(1)) as response:
        assert response.headers["content-type"] == "text/event-stream"
        events = await read_all(response)
    assert events[0].is_priming
    assert any(e.retry is not None for e in events)
    assert not any(e.data for e in events), "the result must not be on the closed stream"
    resume = {**headers, "accept": "text/event-stream", "last-event-id": events[0].id or ""}
    async with client.stream("GET", live.url, headers=resume) as response:
        assert response.status_code == 200
        results = [e for e in await read_all(response) if e.data]
    assert [e.message["id"] for e in results] == [1]
    assert results[0].message["result"]["content"][0]["text"] == "done"


async def test_older_session_is_not_closed_early(live: LiveServer, client: httpx.AsyncClient) -> None:
    session_id = await open_session(client, live.url, "2025-06-18")
    response = await client.post(
        live.url, headers=session_headers(session_id, "2025-06-18"), json=slow(2, 0.6)
    )
    assert response.headers["content-type"] == "application/json"
    assert response.json()["result"]["content"][0]["text"] == "done"


async def test_sdk_client_gets_the_result_of_a_slow_call_by_polling(live: LiveServer) -> None:
    async with asyncio.timeout(20):
        async with streamable_http_client(live.url) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                result = await session.call_tool("slow", {"seconds": 1.0})
    assert result.content[0].text == "done"  # type: ignore[union-attr]
