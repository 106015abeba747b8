"""``/healthz``, ``/readyz`` and ``/metrics`` on one real uvicorn process (memory stores, the demo
registry): the counts a scrape shows after a known load, the stream gauge following an open GET
stream, and the probes' answers. The multi-worker counts and the Redis outage are in
``test_ops_fleet.py``."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import httpx
import pytest

from tests.support import REGISTRY_PROVIDER, live_server_fixture
from tests.support.live_server import LiveServer
from tests.support.mcp_http import next_comment, open_session, request, session_headers, sse_events
from tests.support.scrape import scrape

pytestmark = pytest.mark.timeout(60)
live = live_server_fixture(
    provider=REGISTRY_PROVIDER, load="load_demo", env={"MCP_KEEPALIVE_SECONDS": "0.3"}
)


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=10) as c:
        yield c


def test_healthz_answers_without_touching_anything(live: LiveServer) -> None:
    response = httpx.get(f"{live.base_url}/healthz", timeout=5)
    assert response.status_code == 200 and response.text == "ok\n"


def test_readyz_names_each_check(live: LiveServer) -> None:
    response = httpx.get(f"{live.base_url}/readyz", timeout=5)
    assert response.status_code == 200, response.text
    assert response.json() == {"ready": True, "checks": {"database": "ok", "mcp": "ok"}}


async def test_metrics_count_a_known_load_by_method_status_era_and_tool(
    live: LiveServer, client: httpx.AsyncClient
) -> None:
    before = scrape(live.base_url)
    session_id = await open_session(client, live.url)
    headers = session_headers(session_id)
    for n in range(5):
        echo = request(n, "tools/call", {"name": "echo", "arguments": {"message": f"m{n}"}})
        assert (await client.post(live.url, headers=headers, json=echo)).status_code == 200
    for n, name in enumerate(["fail", "no-such-tool-" + "x" * 40]):
        call = request(10 + n, "tools/call", {"name": name, "arguments": {}})
        assert (await client.post(live.url, headers=headers, json=call)).status_code == 200
    weird = request(20, "made/up", {})
    assert (await client.post(live.url, headers=headers, json=weird)).status_code == 200
    after = scrape(live.base_url)

    def grew(name: str, **labels: str) -> float:
        return after.value(name, **labels) - before.value(name, **labels)

    ok = {"http_method": "POST", "status": "200", "era": "legacy"}
    assert grew("mcp_requests_total", rpc_method="initialize", **ok) == 1
    assert grew("mcp_requests_total", rpc_method="notifications/initialized", status="202") == 1
    assert grew("mcp_requests_total", rpc_method="tools/call", **ok) == 7
    assert grew("mcp_requests_total", rpc_method="other", **ok) == 1  # never the client's string
    assert grew("mcp_tool_calls_total", tool="echo", outcome="ok") == 5
    assert grew("mcp_tool_calls_total", tool="fail", outcome="error") == 1  # isError: true
    assert grew("mcp_tool_calls_total", tool="unknown", outcome="error") == 1  # -32602
    assert grew("mcp_tool_call_duration_seconds_count", tool="echo") == 5
    assert grew("mcp_tool_call_duration_seconds_sum", tool="echo") > 0
    assert not any("no-such-tool" in str(labels) for _, labels, _ in after.samples)
    assert after.value("mcp_sessions_active") >= 1


async def test_open_streams_gauge_follows_a_get_stream(live: LiveServer, client: httpx.AsyncClient) -> None:
    session_id = await open_session(client, live.url)
    idle = scrape(live.base_url).value("mcp_open_streams")
    headers = {**session_headers(session_id), "accept": "text/event-stream"}
    async with client.stream("GET", live.url, headers=headers) as stream:
        await next_comment(sse_events(stream))
        assert scrape(live.base_url).value("mcp_open_streams") == idle + 1
    deadline = asyncio.get_running_loop().time() + 10
    while scrape(live.base_url).value("mcp_open_streams") != idle:  # the server notices the close
        assert asyncio.get_running_loop().time() < deadline, "the closed stream is still counted"
        await asyncio.sleep(0.05)
