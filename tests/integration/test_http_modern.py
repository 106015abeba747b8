"""2026-07-28 POSTs on ``/mcp`` are served statelessly beside legacy sessions (dual-era endpoint).

[26] basic/transports/streamable-http.mdx: no ``Mcp-Session-Id`` minted or echoed; unknown method
→ HTTP 404 + -32601; "Request Metadata" headers must mirror the body (→ 400 + -32020); GET and
DELETE → 405. Raw httpx against real uvicorn.
"""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from tests.support import MEMORY_PROVIDER, live_server_fixture
from tests.support.live_server import LiveServer
from tests.support.mcp_http import POST_HEADERS, open_session, sse_events

pytestmark = pytest.mark.timeout(60)
live = live_server_fixture(provider=MEMORY_PROVIDER)
MODERN = "2026-07-28"


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=10) as c:
        yield c


def modern(id: int, method: str, params: dict[str, Any] | None = None, **meta: Any) -> dict[str, Any]:
    body_meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        **meta,
    }
    return {"jsonrpc": "2.0", "id": id, "method": method, "params": {**(params or {}), "_meta": body_meta}}


def modern_headers(method: str, name: str | None = None, **extra: str) -> dict[str, str]:
    headers = {**POST_HEADERS, "mcp-protocol-version": MODERN, "mcp-method": method}
    if name is not None:
        headers["mcp-name"] = name
    headers.update(extra)
    return headers


async def test_modern_request_is_served_without_a_session(
    live: LiveServer, client: httpx.AsyncClient
) -> None:
    response = await client.post(live.url, headers=modern_headers("tools/list"), json=modern(1, "tools/list"))
    assert response.status_code == 200, response.text
    assert "mcp-session-id" not in response.headers
    result = response.json()["result"]
    assert result["resultType"] == "complete" and "echo" in {t["name"] for t in result["tools"]}


async def test_modern_tools_call_and_discover(live: LiveServer, client: httpx.AsyncClient) -> None:
    body = modern(2, "tools/call", {"name": "echo", "arguments": {"message": "hé"}})
    response = await client.post(live.url, headers=modern_headers("tools/call", "echo"), json=body)
    assert response.json()["result"]["content"][0]["text"] == "hé"
    discover = await client.post(
        live.url, headers=modern_headers("server/discover"), json=modern(3, "server/discover")
    )
    assert MODERN in discover.json()["result"]["supportedVersions"]


async def test_modern_request_ignores_and_never_echoes_a_session_header(
    live: LiveServer, client: httpx.AsyncClient
) -> None:
    headers = modern_headers("tools/list", **{"mcp-session-id": "whatever"})
    response = await client.post(live.url, headers=headers, json=modern(4, "tools/list"))
    assert response.status_code == 200 and "mcp-session-id" not in response.headers


async def test_modern_unknown_method_gets_404_with_method_not_found(
    live: LiveServer, client: httpx.AsyncClient
) -> None:
    response = await client.post(live.url, headers=modern_headers("no/such"), json=modern(5, "no/such"))
    assert response.status_code == 404
    assert response.json()["error"]["code"] == -32601 and response.json()["id"] == 5


async def test_modern_header_mismatches_get_400_with_32020(
    live: LiveServer, client: httpx.AsyncClient
) -> None:
    call = modern(6, "tools/call", {"name": "echo", "arguments": {"message": "x"}})
    cases = [
        {k: v for k, v in modern_headers("tools/call", "echo").items() if k != "mcp-method"},
        modern_headers("tools/list", "echo"),
        modern_headers("tools/call"),
        modern_headers("tools/call", "add"),
        {**modern_headers("tools/call", "echo"), "mcp-protocol-version": "2025-11-25"},
    ]
    for headers in cases:
        response = await client.post(live.url, headers=headers, json=call)
        assert response.status_code == 400, headers
        assert response.json()["error"]["code"] == -32020 and response.json()["id"] == 6


async def test_modern_base64_header_value_is_decoded(live: LiveServer, client: httpx.AsyncClient) -> None:
    encoded = "=?base64?" + base64.b64encode(b"echo").decode() + "?="
    body = modern(7, "tools/call", {"name": "echo", "arguments": {"message": "b"}})
    response = await client.post(live.url, headers=modern_headers("tools/call", encoded), json=body)
    assert response.status_code == 200, response.text


async def test_modern_unsupported_version_gets_400(live: LiveServer, client: httpx.AsyncClient) -> None:
    body = modern(8, "tools/list")
    body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = "2099-01-01"
    headers = {**modern_headers("tools/list"), "mcp-protocol-version": "2099-01-01"}
    response = await client.post(live.url, headers=headers, json=body)
    assert response.status_code == 400 and response.json()["error"]["code"] == -32022


async def test_modern_streamed_response_has_no_event_ids(live: LiveServer, client: httpx.AsyncClient) -> None:
    body = modern(
        9,
        "tools/call",
        {"name": "countdown", "arguments": {"steps": 2}},
        progressToken="t",
        **{"io.modelcontextprotocol/logLevel": "debug"},
    )
    body["params"]["_meta"]["progressToken"] = "t"
    async with client.stream(
        "POST", live.url, headers=modern_headers("tools/call", "countdown"), json=body
    ) as r:
        assert r.headers["content-type"] == "text/event-stream"
        events = [e async for e in sse_events(r) if e.data]
    assert all(e.id is None for e in events)
    assert events[-1].message["id"] == 9 and "notifications/progress" in {
        e.message.get("method") for e in events
    }


async def test_legacy_sessions_keep_working_beside_modern_requests(
    live: LiveServer, client: httpx.AsyncClient
) -> None:
    session_id = await open_session(client, live.url)
    await client.post(live.url, headers=modern_headers("tools/list"), json=modern(10, "tools/list"))
    headers = {**POST_HEADERS, "mcp-session-id": session_id, "mcp-protocol-version": "2025-11-25"}
    response = await client.post(
        live.url, headers=headers, json={"jsonrpc": "2.0", "id": 11, "method": "ping"}
    )
    assert response.status_code == 200 and response.json()["result"] == {}
