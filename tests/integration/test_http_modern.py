"""2026-07-28 POSTs on ``/mcp`` are served statelessly beside legacy sessions (dual-era endpoint).

[26] basic/transports/streamable-http.mdx: no ``Mcp-Session-Id`` minted or echoed; unknown method
→ HTTP 404 + -32601; "Request Metadata" headers must mirror the body (→ 400 + -32020); GET and
DELETE → 405. Raw httpx against real uvicorn.
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from tests.support import MEMORY_PROVIDER, live_server_fixture
from tests.support.live_server import LiveServer
from tests.support.mcp_http import POST_HEADERS, modern_message, open_session, sse_events
from tests.support.mcp_http import modern_headers as mirrored_headers

pytestmark = pytest.mark.timeout(60)
live = live_server_fixture(provider=MEMORY_PROVIDER)
MODERN = "2026-07-28"


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=10) as c:
        yield c


def modern(id: int, method: str, params: dict[str, Any] | None = None, **meta: Any) -> dict[str, Any]:
    return modern_message(id, method, params, **meta)


def modern_headers(method: str, name: str | None = None, **extra: str) -> dict[str, str]:
    return mirrored_headers(method, name, **extra)


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


# -- the era of each request (docs/reference/endpoint.md "How /mcp answers") ---------------------------
async def test_header_alone_makes_a_request_modern_and_a_missing_meta_gets_32602(
    live: LiveServer, client: httpx.AsyncClient
) -> None:
    # 2026-07-28 basic/index.mdx: a missing required _meta field → -32602 with HTTP 400, and the
    # error echoes the request id (not "Mcp-Session-Id header is required").
    bare = {"jsonrpc": "2.0", "id": 21, "method": "server/discover", "params": {}}
    response = await client.post(live.url, headers=modern_headers("server/discover"), json=bare)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32602 and response.json()["id"] == 21
    no_version = modern(22, "server/discover")
    del no_version["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"]
    response = await client.post(live.url, headers=modern_headers("server/discover"), json=no_version)
    assert (response.status_code, response.json()["error"]["code"], response.json()["id"]) == (
        400,
        -32602,
        22,
    )
    no_caps = modern(23, "server/discover")
    del no_caps["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]
    response = await client.post(live.url, headers=modern_headers("server/discover"), json=no_caps)
    assert (response.status_code, response.json()["error"]["code"], response.json()["id"]) == (
        400,
        -32602,
        23,
    )


async def test_a_later_revision_in_the_header_is_modern_too(
    live: LiveServer, client: httpx.AsyncClient
) -> None:
    body = modern(24, "server/discover")
    body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = "2027-03-01"
    headers = {**modern_headers("server/discover"), "mcp-protocol-version": "2027-03-01"}
    response = await client.post(live.url, headers=headers, json=body)
    assert (response.status_code, response.json()["error"]["code"], response.json()["id"]) == (
        400,
        -32022,
        24,
    )
    assert response.json()["error"]["data"]["requested"] == "2027-03-01"


async def test_initialize_with_modern_meta_is_a_removed_method(
    live: LiveServer, client: httpx.AsyncClient
) -> None:
    body = modern(25, "initialize")
    response = await client.post(live.url, headers=modern_headers("initialize"), json=body)
    assert (response.status_code, response.json()["error"]["code"], response.json()["id"]) == (
        404,
        -32601,
        25,
    )
    assert "mcp-session-id" not in response.headers


async def test_plain_initialize_still_starts_a_legacy_session_whatever_its_header(
    live: LiveServer, client: httpx.AsyncClient
) -> None:
    client_info = {"name": "t", "version": "1"}
    params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": client_info}
    init = {"jsonrpc": "2.0", "id": 26, "method": "initialize", "params": params}
    response = await client.post(live.url, headers=modern_headers("initialize"), json=init)
    assert response.status_code == 200 and "mcp-session-id" in response.headers


async def raw_post(live: LiveServer, headers: dict[str, str], body: dict[str, Any]) -> tuple[int, Any]:
    """POST with header bytes exactly as given (httpx refuses values with surrounding spaces)."""
    payload = json.dumps(body).encode()
    head = f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{live.port}\r\nContent-Length: {len(payload)}\r\n"
    head += "Connection: close\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n"
    reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", live.port), 10)
    try:
        writer.write(head.encode("latin-1") + payload)
        raw = await asyncio.wait_for(reader.read(), 10)
    finally:
        writer.close()
    status_line, _, rest = raw.partition(b"\r\n")
    return int(status_line.split()[1]), json.loads(rest.partition(b"\r\n\r\n")[2] or b"null")


async def test_header_values_are_compared_without_surrounding_whitespace(live: LiveServer) -> None:
    # RFC 9110 §5.5: optional whitespace around a field value is not part of the value.
    body = modern(27, "tools/call", {"name": "echo", "arguments": {"message": "w"}})
    headers = modern_headers("tools/call", "echo  \t", **{"mcp-method": "tools/call "})
    status, answer = await raw_post(live, headers, body)
    assert status == 200, answer
    # Inner whitespace still counts.
    status, answer = await raw_post(live, modern_headers("tools/call", "ec ho"), body)
    assert (status, answer["error"]["code"]) == (400, -32020)


async def test_modern_client_sending_a_response_gets_400(live: LiveServer, client: httpx.AsyncClient) -> None:
    response = await client.post(
        live.url, headers=modern_headers("x"), json={"jsonrpc": "2.0", "id": 28, "result": {}}
    )
    # It answers no request: the error has no id to echo.
    assert (response.status_code, response.json()["error"]["code"], response.json()["id"]) == (
        400,
        -32600,
        None,
    )


async def test_no_log_messages_without_a_requested_log_level(
    live: LiveServer, client: httpx.AsyncClient
) -> None:
    # 2026-07-28 server/utilities/logging.mdx: no notifications/message for a request that lacks
    # _meta["io.modelcontextprotocol/logLevel"]; progress still flows.
    body = modern(29, "tools/call", {"name": "countdown", "arguments": {"steps": 2}}, progressToken="p")
    async with client.stream(
        "POST", live.url, headers=modern_headers("tools/call", "countdown"), json=body
    ) as r:
        methods = [e.message.get("method") async for e in sse_events(r) if e.data]
    assert "notifications/progress" in methods and "notifications/message" not in methods


async def test_legacy_errors_echo_the_request_id(live: LiveServer, client: httpx.AsyncClient) -> None:
    ping = {"jsonrpc": "2.0", "id": 30, "method": "ping"}
    response = await client.post(live.url, headers=POST_HEADERS, json=ping)  # no session
    assert (response.status_code, response.json()["id"]) == (400, 30)
    response = await client.post(live.url, headers={**POST_HEADERS, "mcp-session-id": "gone"}, json=ping)
    assert (response.status_code, response.json()["id"]) == (404, 30)


async def test_closing_the_response_cancels_the_request_even_before_anything_streamed(
    live: LiveServer, client: httpx.AsyncClient
) -> None:
    # [26] streamable-http.mdx "Cancellation": closing the response stream MUST be treated as
    # cancellation. ``slow`` sleeps 30 s and sends nothing: the server sees the client leave and
    # cancels its handler, so the request is over (counted in /metrics) long before 30 s.
    def finished_slow_calls(text: str) -> float:
        return sum(
            float(line.rsplit(" ", 1)[1])
            for line in text.splitlines()
            if line.startswith("mcp_requests_total{")
            and 'rpc_method="tools/call"' in line
            and 'era="modern"' in line
        )

    before = finished_slow_calls((await client.get(f"{live.base_url}/metrics")).text)
    body = modern(40, "tools/call", {"name": "slow", "arguments": {"seconds": 30}})
    with pytest.raises(httpx.ReadTimeout):
        await client.post(live.url, headers=modern_headers("tools/call", "slow"), json=body, timeout=0.5)
    for _ in range(100):  # 10 s at most, far below the tool's 30 s
        if finished_slow_calls((await client.get(f"{live.base_url}/metrics")).text) > before:
            break
        await asyncio.sleep(0.1)  # polling an external counter: there is no event to wait on
    else:
        pytest.fail("the request kept running after its client left")
