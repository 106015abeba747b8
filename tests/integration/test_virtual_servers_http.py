"""Virtual servers against a real server process (uvicorn, memory backends, a provider whose
snapshot has servers ``a`` and ``b``: ``tests/support/virtual_servers.py``): the official SDK
client on ``/mcp/<slug>`` over Streamable HTTP and over the legacy HTTP+SSE transport at
``/sse/<slug>``; replay of a stream only on its own endpoint; ``MCP_DEFAULT_SERVER``."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager

import anyio
import httpx
import pytest
from mcp.client.session import ClientSession
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from tests.support import LiveServer
from tests.support.mcp_http import POST_HEADERS, initialize_message, open_session, sse_events, stream_headers

pytestmark = [
    pytest.mark.timeout(90),
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]
PROVIDER = "tests.support.virtual_servers.DemoServers"


@pytest.fixture(scope="module")
def live() -> Iterator[LiveServer]:
    server = LiveServer(provider=PROVIDER).start()
    try:
        yield server
    finally:
        server.stop()


@asynccontextmanager
async def streamable(url: str) -> AsyncIterator[ClientSession]:
    async with streamable_http_client(url) as (read, write):
        async with ClientSession(read, write) as session:
            with anyio.fail_after(20):
                yield session


@asynccontextmanager
async def legacy(url: str) -> AsyncIterator[ClientSession]:
    async with sse_client(url) as (read, write):
        async with ClientSession(read, write) as session:
            with anyio.fail_after(20):
                yield session


async def test_the_sdk_client_sees_each_endpoint_as_its_own_server(live: LiveServer) -> None:
    async with streamable(f"{live.base_url}/mcp/a") as session:
        init = await session.initialize()
        assert (init.server_info.name, init.server_info.version) == ("server-a", "2.0.0")
        assert init.instructions == "Use A for echoes."
        assert [t.name for t in (await session.list_tools()).tools] == ["echo", "add"]
        echoed = await session.call_tool("echo", {"message": "on a"})
        assert echoed.content[0].text == "on a"  # type: ignore[union-attr]
        with pytest.raises(MCPError, match="Unknown tool: countdown"):  # b's, not a's: unknown here
            await session.call_tool("countdown", {"steps": 1})
    async with streamable(f"{live.base_url}/mcp/b/") as session:
        init = await session.initialize()
        assert init.server_info.name == "server-b"
        assert [t.name for t in (await session.list_tools()).tools] == ["countdown", "ask_llm"]
    async with streamable(live.url) as session:
        init = await session.initialize()
        assert init.server_info.name == "mcpsite"
        assert {"echo", "countdown", "slow"} <= {t.name for t in (await session.list_tools()).tools}


async def test_the_legacy_transport_serves_a_virtual_server_at_sse_slug(live: LiveServer) -> None:
    async with legacy(f"{live.base_url}/sse/a") as session:
        init = await session.initialize()
        assert init.server_info.name == "server-a"
        assert [t.name for t in (await session.list_tools()).tools] == ["echo", "add"]
        echoed = await session.call_tool("echo", {"message": "over sse"})
        assert echoed.content[0].text == "over sse"  # type: ignore[union-attr]


async def test_an_unknown_slug_is_a_404_on_both_transports(live: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=live.base_url, timeout=10) as client:
        for path in ("/mcp/nope", "/mcp/c"):
            posted = await client.post(path, headers=POST_HEADERS, json=initialize_message())
            assert posted.status_code == 404 and posted.json()["error"]["code"] < 0
        streamed = await client.get("/sse/nope", headers={"accept": "text/event-stream"})
        assert streamed.status_code == 404 and "error" in streamed.json()
        # Below an endpoint is Django's (the server card's place): never the endpoint's answer.
        below = await client.get("/mcp/a/server-card")
        assert "jsonrpc" not in below.text


async def test_a_stream_is_resumed_only_on_its_own_endpoint(live: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=live.base_url, timeout=10) as client:
        session_id = await open_session(client, "/mcp/b")
        async with client.stream("GET", "/mcp/b", headers=stream_headers(session_id)) as response:
            assert response.status_code == 200
            events = sse_events(response)
            with anyio.fail_after(10):
                priming = await anext(events)
        assert priming.id
        resume = stream_headers(session_id, priming.id)
        for path in ("/mcp/a", "/mcp"):
            elsewhere = await client.get(path, headers=resume)
            assert elsewhere.status_code == 404
            assert elsewhere.json()["error"]["message"] == "Session not found"
        async with client.stream("GET", "/mcp/b", headers=resume) as response:
            assert response.status_code == 200
        ended = await client.delete("/mcp/a", headers=stream_headers(session_id))
        assert ended.status_code == 404
        assert (await client.delete("/mcp/b", headers=stream_headers(session_id))).status_code == 200


async def test_default_server_setting_makes_mcp_that_server_or_turns_it_off() -> None:
    server = LiveServer(provider=PROVIDER, env={"MCP_DEFAULT_SERVER": "a"}, probe_path="/healthz").start()
    try:
        async with streamable(server.url) as session:
            init = await session.initialize()
            assert init.server_info.name == "server-a"
    finally:
        server.stop()
    off = LiveServer(provider=PROVIDER, env={"MCP_DEFAULT_SERVER": "off"}, probe_path="/healthz").start()
    try:
        async with httpx.AsyncClient(base_url=off.base_url, timeout=10) as client:
            refused = await client.post("/mcp", headers=POST_HEADERS, json=initialize_message())
            assert refused.status_code == 404 and refused.json()["jsonrpc"] == "2.0"
            served = await client.post("/mcp/b", headers=POST_HEADERS, json=initialize_message())
            assert served.status_code == 200
    finally:
        off.stop()
