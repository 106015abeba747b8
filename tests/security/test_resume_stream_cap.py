"""Issue 24 item 11 (first part): resume streams count against the per-principal stream cap.

A real server with ``MCP_MAX_SESSIONS_PER_PRINCIPAL=2``: the standalone GET stream of a session
and one resume (GET with the ``Last-Event-ID`` of a POST stream whose request still runs) take the
principal's two streams; a third GET, another resume of the same stream, is a 429 with
``Retry-After``, and once a stream closes a resume is served again. Without the cap every resume
held a connection, a task and a log reader, as many as a client cared to open.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import httpx
import pytest

from tests.support import MEMORY_PROVIDER, LiveServer, live_server_fixture
from tests.support.mcp_http import (
    POST_HEADERS,
    initialize_message,
    notification,
    request,
    session_headers,
    sse_events,
    stream_headers,
)

pytestmark = pytest.mark.timeout(60)
WAIT = 10.0


live = live_server_fixture(
    env={"MCP_MAX_SESSIONS_PER_PRINCIPAL": "2", "MCP_ALWAYS_STREAM": "1", "MCP_KEEPALIVE_SECONDS": "0.5"},
    provider=MEMORY_PROVIDER,
)


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=WAIT) as c:
        yield c


async def _open(client: httpx.AsyncClient, url: str, headers: dict[str, str]) -> httpx.Response:
    return await client.send(client.build_request("GET", url, headers=headers), stream=True)


async def test_resume_streams_count_against_the_principals_stream_cap(
    live: LiveServer, client: httpx.AsyncClient
) -> None:
    opened = await client.post(live.url, headers=POST_HEADERS, json=initialize_message())
    sid = opened.headers["mcp-session-id"]
    await client.post(live.url, headers=session_headers(sid), json=notification("notifications/initialized"))
    # A request that keeps running: its POST stream's first event id names a stream to resume.
    post = await client.send(client.build_request(
        "POST", live.url, headers=session_headers(sid),
        json=request(1, "tools/call", {"name": "slow", "arguments": {"seconds": 30}})), stream=True)
    async with asyncio.timeout(WAIT):
        event_id = None
        async for event in sse_events(post):
            if event.id:
                event_id = event.id
                break
    assert event_id is not None
    await post.aclose()  # the connection is lost; the request runs on

    streams = [await _open(client, live.url, stream_headers(sid)),
               await _open(client, live.url, stream_headers(sid, event_id))]
    try:
        assert [s.status_code for s in streams] == [200, 200]
        refused = await _open(client, live.url, stream_headers(sid, event_id))
        assert refused.status_code == 429, "a resume beyond the principal's stream cap was served"
        assert refused.headers["retry-after"] == "1"
        await refused.aclose()
        await streams.pop().aclose()
        for _ in range(50):  # the server notices the closed stream at its next read or keep-alive
            again = await _open(client, live.url, stream_headers(sid, event_id))
            if again.status_code == 200:
                streams.append(again)
                break
            await again.aclose()
            await asyncio.sleep(0.1)
        assert streams[-1].status_code == 200 and len(streams) == 2
    finally:
        for stream in streams:
            await stream.aclose()
