"""The first-run setup: uvicorn + the registry provider + demo data, and changes made outside the
server (a ``manage.py shell``) reaching a live GET stream through the Redis bus.

The server runs exactly as the README's first command (``uvicorn mcpsite.asgi:application``), on
a temporary SQLite database prepared with ``migrate`` + ``load_demo``; stores and bus on the real
Redis under a per-module key prefix. Skipped without Redis.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest

from mcp_protocol.bus.base import CHANGES
from mcp_protocol.bus.redis import RedisBus
from tests.support import REGISTRY_PROVIDER, LiveServer
from tests.support.mcp_http import (
    POST_HEADERS,
    next_data,
    open_session,
    request,
    session_headers,
    sse_events,
)
from tests.support.shared_redis import REDIS_URL, new_prefix, redis_prefix

pytestmark = pytest.mark.timeout(120)
PREFIX = new_prefix()


@pytest.fixture(scope="module")
def live() -> Iterator[LiveServer]:
    with redis_prefix(PREFIX):
        env = {"REDIS_URL": REDIS_URL, "MCP_KEY_PREFIX": PREFIX, "MCP_KEEPALIVE_SECONDS": "0.5"}
        with LiveServer(provider=REGISTRY_PROVIDER, load="load_demo", env=env) as server:
            yield server


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=10) as c:
        yield c


async def tool_names(client: httpx.AsyncClient, url: str, session_id: str) -> set[str]:
    response = await client.post(url, headers=session_headers(session_id), json=request(1, "tools/list"))
    return {t["name"] for t in response.json()["result"]["tools"]}


async def test_landing_page_shows_the_mcp_url_and_admin_link(
    live: LiveServer, client: httpx.AsyncClient
) -> None:
    response = await client.get(live.base_url + "/")
    assert response.status_code == 200
    assert live.url in response.text and 'href="/admin/"' in response.text


async def test_demo_registry_is_served(live: LiveServer, client: httpx.AsyncClient) -> None:
    session_id = await open_session(client, live.url)
    assert "echo" in await tool_names(client, live.url, session_id)
    call = request(2, "tools/call", {"name": "echo", "arguments": {"message": "hi"}})
    response = await client.post(live.url, headers=session_headers(session_id), json=call)
    assert response.status_code == 200 and "hi" in response.text


async def test_a_change_saved_in_a_shell_reaches_the_get_stream_and_the_next_list(
    live: LiveServer, client: httpx.AsyncClient
) -> None:
    session_id = await open_session(client, live.url)
    assert "echo" in await tool_names(client, live.url, session_id)
    async with client.stream(
        "GET", live.url, headers={**session_headers(session_id), "accept": "text/event-stream"}
    ) as stream:
        assert stream.status_code == 200
        script = (
            "from registry.models import Tool; t = Tool.objects.get(name='echo'); t.enabled = False; t.save()"
        )
        await asyncio.to_thread(live.manage, "shell", "-c", script)
        received: list[dict[str, Any]] = []
        async with asyncio.timeout(20):
            async for event in sse_events(stream):
                if event.data:
                    received.append(event.message)
                    break
    assert received == [{"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}]
    assert "echo" not in await tool_names(client, live.url, session_id)




async def test_a_new_get_stream_carries_only_what_follows_its_priming_event(
    live: LiveServer, client: httpx.AsyncClient
) -> None:
    # [L] transports.mdx: a message goes on one stream, so a notification the first GET stream
    # delivered is not sent again on the next one; [11]: each new stream starts with a priming
    # event whose id resumes it.
    session_id = await open_session(client, live.url)
    headers = {**session_headers(session_id), "accept": "text/event-stream"}
    bus = RedisBus(url=REDIS_URL, prefix=PREFIX)
    try:
        async with client.stream("GET", live.url, headers=headers) as first:
            events = sse_events(first)
            assert (await anext(events)).is_priming
            await bus.publish(CHANGES, {"id": uuid.uuid4().hex, "kind": "tools", "uris": []})
            assert (await next_data(events)).message["method"] == "notifications/tools/list_changed"
        async with client.stream("GET", live.url, headers=headers) as second:  # no Last-Event-ID
            assert second.status_code == 200
            events = sse_events(second)
            priming = await anext(events)
            assert priming.is_priming and priming.id is not None
            await bus.publish(CHANGES, {"id": uuid.uuid4().hex, "kind": "prompts", "uris": []})
            assert (await next_data(events)).message["method"] == "notifications/prompts/list_changed"
        resume = {**headers, "last-event-id": priming.id}
        async with client.stream("GET", live.url, headers=resume) as resumed:
            assert resumed.status_code == 200
            replayed = await next_data(sse_events(resumed))
            assert replayed.message["method"] == "notifications/prompts/list_changed"
    finally:
        await bus.close()


async def test_modern_call_needs_the_mcp_param_header_of_an_x_mcp_header_argument(
    live: LiveServer, client: httpx.AsyncClient
) -> None:
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    body = request(
        5, "tools/call", {"name": "region_lookup", "arguments": {"region": "eu-west"}, "_meta": meta}
    )
    headers = {
        **POST_HEADERS,
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": "region_lookup",
    }
    missing = await client.post(live.url, headers=headers, json=body)
    assert missing.status_code == 400 and missing.json()["error"]["code"] == -32020
    wrong = await client.post(live.url, headers={**headers, "mcp-param-region": "us-east"}, json=body)
    assert wrong.status_code == 400 and wrong.json()["error"]["code"] == -32020
    good = await client.post(live.url, headers={**headers, "mcp-param-region": "eu-west"}, json=body)
    assert good.status_code == 200, good.text
    assert "eu-west" in good.json()["result"]["content"][0]["text"]
