"""``/mcp`` with two uvicorn workers sharing state through the real Redis (no sticky sessions).

Every request opens its own connection, so the kernel spreads them over both workers: sessions,
the one-GET-stream claim, Last-Event-ID resume and a client's answer to a server→client request
must work whichever worker gets each request. Changes published on the bus reach the GET stream
exactly once (``fanout/``: every worker hears them, one writes them). Skipped without Redis.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest

from mcp_protocol.bus.redis import RedisBus
from tests.support import MEMORY_PROVIDER, LiveServer
from tests.support.mcp_http import SSEEvent, open_session, request, session_headers, sse_events
from tests.support.shared_redis import REDIS_URL, new_prefix, redis_prefix

pytestmark = pytest.mark.timeout(90)
PREFIX = new_prefix()


@pytest.fixture(scope="module")
def live() -> Iterator[LiveServer]:
    with redis_prefix(PREFIX):
        env = {"REDIS_URL": REDIS_URL, "MCP_KEY_PREFIX": PREFIX, "MCP_KEEPALIVE_SECONDS": "0.5"}
        with LiveServer(provider=MEMORY_PROVIDER, env=env, workers=2) as server:
            yield server


def fresh_client() -> httpx.AsyncClient:
    # No keep-alive: each request is a new connection, so it may land on either worker.
    return httpx.AsyncClient(timeout=10, limits=httpx.Limits(max_keepalive_connections=0))


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with fresh_client() as c:
        yield c


def get_headers(session_id: str, last_event_id: str | None = None) -> dict[str, str]:
    headers = {**session_headers(session_id), "accept": "text/event-stream"}
    if last_event_id:
        headers["last-event-id"] = last_event_id
    return headers


async def test_session_works_on_every_worker(live: LiveServer, client: httpx.AsyncClient) -> None:
    session_id = await open_session(client, live.url)
    for n in range(10):
        response = await client.post(live.url, headers=session_headers(session_id), json=request(n, "ping"))
        assert response.status_code == 200 and response.json()["id"] == n
    assert (await client.delete(live.url, headers=session_headers(session_id))).status_code == 200
    for n in range(4):
        response = await client.post(live.url, headers=session_headers(session_id), json=request(n, "ping"))
        assert response.status_code == 404


async def test_second_get_stream_gets_409_across_workers(live: LiveServer, client: httpx.AsyncClient) -> None:
    session_id = await open_session(client, live.url)
    async with client.stream("GET", live.url, headers=get_headers(session_id)) as first:
        assert first.status_code == 200
        for _ in range(4):
            assert (await client.get(live.url, headers=get_headers(session_id))).status_code == 409


async def _sampling_round(client: httpx.AsyncClient, url: str, session_id: str, n: int) -> dict[str, Any]:
    body = request(n, "tools/call", {"name": "ask_llm", "arguments": {"prompt": f"q{n}"}})
    async with client.stream("POST", url, headers=session_headers(session_id), json=body) as response:
        async with asyncio.timeout(15):
            async for event in sse_events(response):
                if not event.data:
                    continue
                message = event.message
                if message.get("method") == "sampling/createMessage":
                    answer = {
                        "jsonrpc": "2.0",
                        "id": message["id"],
                        "result": {
                            "role": "assistant",
                            "content": {"type": "text", "text": f"a{n}"},
                            "model": "m",
                        },
                    }
                    async with fresh_client() as other:  # the answer may land on the other worker
                        posted = await other.post(url, headers=session_headers(session_id), json=answer)
                    assert posted.status_code == 202
                elif message.get("id") == n:
                    return message
    raise AssertionError("stream ended without the result")


async def test_client_answers_reach_the_waiting_handler_on_any_worker(
    live: LiveServer, client: httpx.AsyncClient
) -> None:
    session_id = await open_session(client, live.url)
    results = [await _sampling_round(client, live.url, session_id, n) for n in range(6)]
    assert [r["result"]["content"][0]["text"] for r in results] == [f"LLM response: a{n}" for n in range(6)]


async def test_dropped_stream_resumes_on_any_worker(live: LiveServer, client: httpx.AsyncClient) -> None:
    session_id = await open_session(client, live.url)
    body = request(
        7, "tools/call", {"name": "countdown", "arguments": {"steps": 3}, "_meta": {"progressToken": 1}}
    )
    async with client.stream("POST", live.url, headers=session_headers(session_id), json=body) as response:
        async with asyncio.timeout(10):
            events = [e async for e in sse_events(response) if e.id]
    for start in range(len(events) - 1):
        async with client.stream(
            "GET", live.url, headers=get_headers(session_id, events[start].id)
        ) as resumed:
            assert resumed.status_code == 200
            async with asyncio.timeout(10):
                replayed = [e async for e in sse_events(resumed) if e.data]
        assert [e.id for e in replayed] == [e.id for e in events[start + 1 :]]


async def _next_notifications(events: AsyncIterator[SSEEvent], count: int) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    async with asyncio.timeout(10):
        async for event in events:
            if event.data:
                found.append(event.message)
                if len(found) == count:
                    return found
    raise AssertionError(f"stream ended after {found}")


async def test_changes_reach_the_get_stream_exactly_once(live: LiveServer, client: httpx.AsyncClient) -> None:
    session_id = await open_session(client, live.url)
    subscribe = request(1, "resources/subscribe", {"uri": "demo://readme"})
    assert (
        await client.post(live.url, headers=session_headers(session_id), json=subscribe)
    ).status_code == 200
    for _ in range(4):  # make sure both workers have started (and subscribed to the changes channel)
        await client.post(live.url, headers=session_headers(session_id), json=request(2, "ping"))
    bus = RedisBus(url=REDIS_URL, prefix=PREFIX)
    try:
        async with client.stream("GET", live.url, headers=get_headers(session_id)) as stream:
            assert stream.status_code == 200
            events = sse_events(stream)
            await bus.publish("changes", {"id": uuid.uuid4().hex, "kind": "tools", "uris": []})
            first = await _next_notifications(events, 1)
            await bus.publish(
                "changes", {"id": uuid.uuid4().hex, "kind": "resources", "uris": ["demo://readme"]}
            )
            rest = await _next_notifications(events, 2)
            async with asyncio.timeout(5):  # nothing else (no duplicate) before the next keep-alive
                async for event in events:
                    assert not event.data, event.data
                    if event.comments:
                        break
    finally:
        await bus.close()
    methods = [m["method"] for m in first + rest]
    assert methods == [
        "notifications/tools/list_changed",
        "notifications/resources/list_changed",
        "notifications/resources/updated",
    ]
    assert rest[1]["params"] == {"uri": "demo://readme"}
