"""Every status code and header rule of ``/mcp`` (legacy era), with raw httpx against real uvicorn.

[L] basic/transports.mdx; 406/415/413/409/421 follow the SDKs where the spec sets no status
(checklist §2.V). Error bodies are JSON-RPC errors with ``"id": null`` unless the request's id
was known.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator

import httpx
import pytest

from tests.support import MEMORY_PROVIDER, live_server_fixture
from tests.support.live_server import LiveServer
from tests.support.mcp_http import (
    POST_HEADERS,
    initialize_message,
    notification,
    open_session,
    request,
    session_headers,
)

pytestmark = pytest.mark.timeout(60)
BODY_LIMIT = 20_000
live = live_server_fixture(provider=MEMORY_PROVIDER, env={"MCP_MAX_BODY_BYTES": str(BODY_LIMIT)})


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=10) as c:
        yield c


def assert_jsonrpc_error(
    response: httpx.Response, status: int, code: int, id: object = None
) -> dict[str, object]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert body["jsonrpc"] == "2.0" and body["id"] == id and body["error"]["code"] == code, body
    error: dict[str, object] = body["error"]
    return error


# -- POST: Accept, Content-Type, size, JSON ----------------------------------------------------
async def test_post_without_both_accept_types_gets_406(live: LiveServer, client: httpx.AsyncClient) -> None:
    for accept in ("application/json", "text/event-stream", "text/html"):
        response = await client.post(
            live.url,
            headers={"accept": accept, "content-type": "application/json"},
            json=initialize_message(),
        )
        assert_jsonrpc_error(response, 406, -32600)


async def test_post_with_wildcard_accept_is_served(live: LiveServer, client: httpx.AsyncClient) -> None:
    response = await client.post(
        live.url, headers={"accept": "*/*", "content-type": "application/json"}, json=initialize_message()
    )
    assert response.status_code == 200


async def test_post_with_non_json_content_type_gets_415(live: LiveServer, client: httpx.AsyncClient) -> None:
    headers = {**POST_HEADERS, "content-type": "text/plain"}
    response = await client.post(live.url, headers=headers, content=json.dumps(initialize_message()))
    assert_jsonrpc_error(response, 415, -32600)


async def test_post_body_over_the_limit_gets_413(live: LiveServer, client: httpx.AsyncClient) -> None:
    big = initialize_message()
    big["params"]["clientInfo"]["name"] = "x" * BODY_LIMIT
    response = await client.post(live.url, headers=POST_HEADERS, json=big)
    assert_jsonrpc_error(response, 413, -32600)


async def test_chunked_body_over_the_limit_gets_413(live: LiveServer, client: httpx.AsyncClient) -> None:
    async def chunks() -> AsyncIterator[bytes]:
        for _ in range(5):
            yield b" " * (BODY_LIMIT // 2)

    response = await client.post(live.url, headers=POST_HEADERS, content=chunks())
    assert_jsonrpc_error(response, 413, -32600)


async def test_invalid_json_gets_400_parse_error(live: LiveServer, client: httpx.AsyncClient) -> None:
    response = await client.post(live.url, headers=POST_HEADERS, content=b"{not json")
    assert_jsonrpc_error(response, 400, -32700)


async def test_invalid_jsonrpc_message_gets_400_with_its_id(
    live: LiveServer, client: httpx.AsyncClient
) -> None:
    response = await client.post(
        live.url, headers=POST_HEADERS, json={"jsonrpc": "1.0", "id": 7, "method": "x"}
    )
    assert_jsonrpc_error(response, 400, -32600, id=7)


async def test_other_http_methods_get_405_with_allow(live: LiveServer, client: httpx.AsyncClient) -> None:
    response = await client.put(live.url, headers=POST_HEADERS, json={})
    assert response.status_code == 405
    assert response.headers["allow"] == "GET, POST, DELETE"


# -- sessions ----------------------------------------------------------------------------------
async def test_initialize_issues_a_random_visible_ascii_session_id(
    live: LiveServer, client: httpx.AsyncClient
) -> None:
    ids = set()
    for _ in range(3):
        response = await client.post(live.url, headers=POST_HEADERS, json=initialize_message())
        assert response.status_code == 200
        assert response.headers["content-type"] == "application/json"
        session_id = response.headers["mcp-session-id"]
        assert re.fullmatch(r"[\x21-\x7e]{32,}", session_id)
        ids.add(session_id)
    assert len(ids) == 3


async def test_request_without_session_id_gets_400(live: LiveServer, client: httpx.AsyncClient) -> None:
    response = await client.post(live.url, headers=POST_HEADERS, json=request(1, "tools/list"))
    assert_jsonrpc_error(response, 400, -32600, id=1)  # the body was read: its id is echoed


async def test_unknown_session_id_gets_404(live: LiveServer, client: httpx.AsyncClient) -> None:
    response = await client.post(
        live.url, headers=session_headers("no-such-session"), json=request(1, "tools/list")
    )
    assert_jsonrpc_error(response, 404, -32600, id=1)


async def test_notification_and_client_response_get_202_with_no_body(
    live: LiveServer, client: httpx.AsyncClient
) -> None:
    session_id = await open_session(client, live.url)
    headers = session_headers(session_id)
    sent = await client.post(
        live.url, headers=headers, json=notification("notifications/cancelled", {"requestId": 99})
    )
    assert sent.status_code == 202 and sent.content == b""
    reply = await client.post(
        live.url, headers=headers, json={"jsonrpc": "2.0", "id": "s-unknown", "result": {}}
    )
    assert reply.status_code == 202 and reply.content == b""


async def test_request_in_json_mode_gets_application_json(
    live: LiveServer, client: httpx.AsyncClient
) -> None:
    session_id = await open_session(client, live.url)
    response = await client.post(live.url, headers=session_headers(session_id), json=request(1, "tools/list"))
    assert response.status_code == 200 and response.headers["content-type"] == "application/json"
    assert response.json()["id"] == 1 and "echo" in {t["name"] for t in response.json()["result"]["tools"]}
    assert "mcp-session-id" not in response.headers


async def test_delete_ends_the_session_and_later_requests_get_404(
    live: LiveServer, client: httpx.AsyncClient
) -> None:
    session_id = await open_session(client, live.url)
    headers = session_headers(session_id)
    deleted = await client.delete(live.url, headers=headers)
    assert deleted.status_code == 200
    assert_jsonrpc_error(await client.post(live.url, headers=headers, json=request(2, "ping")), 404, -32600,
                         id=2)
    assert (await client.get(live.url, headers={**headers, "accept": "text/event-stream"})).status_code == 404
    assert (await client.delete(live.url, headers=headers)).status_code == 404


# -- MCP-Protocol-Version ----------------------------------------------------------------------
async def test_unsupported_protocol_version_header_gets_400(
    live: LiveServer, client: httpx.AsyncClient
) -> None:
    session_id = await open_session(client, live.url)
    response = await client.post(
        live.url, headers=session_headers(session_id, "1999-01-01"), json=request(1, "ping")
    )
    error = assert_jsonrpc_error(response, 400, -32600, id=1)
    assert error["data"]["requested"] == "1999-01-01"  # type: ignore[index]


async def test_version_header_other_than_negotiated_gets_400(
    live: LiveServer, client: httpx.AsyncClient
) -> None:
    session_id = await open_session(client, live.url)
    response = await client.post(
        live.url, headers=session_headers(session_id, "2025-06-18"), json=request(1, "ping")
    )
    assert_jsonrpc_error(response, 400, -32600, id=1)


async def test_missing_version_header_and_2025_03_26_are_accepted(
    live: LiveServer, client: httpx.AsyncClient
) -> None:
    session_id = await open_session(client, live.url)
    for version in ("", "2025-03-26"):  # missing → assume 2025-03-26; the conformance suite sends it
        response = await client.post(
            live.url, headers=session_headers(session_id, version), json=request(1, "ping")
        )
        assert response.status_code == 200 and response.json()["result"] == {}


# -- batches -----------------------------------------------------------------------------------
async def test_batch_in_a_2025_03_26_session_is_answered_as_an_array(
    live: LiveServer, client: httpx.AsyncClient
) -> None:
    session_id = await open_session(client, live.url, "2025-03-26")
    batch = [
        request(1, "ping"),
        notification("notifications/progress"),
        {"jsonrpc": "2.0", "id": 3},
        request(2, "tools/list"),
    ]
    response = await client.post(live.url, headers=session_headers(session_id, "2025-03-26"), json=batch)
    assert response.status_code == 200 and response.headers["content-type"] == "application/json"
    by_id = {item["id"]: item for item in response.json()}
    assert by_id[1]["result"] == {} and "tools" in by_id[2]["result"] and by_id[3]["error"]["code"] == -32600


async def test_batch_of_notifications_only_gets_202(live: LiveServer, client: httpx.AsyncClient) -> None:
    session_id = await open_session(client, live.url, "2025-03-26")
    batch = [notification("notifications/cancelled", {"requestId": 5})]
    response = await client.post(live.url, headers=session_headers(session_id, "2025-03-26"), json=batch)
    assert response.status_code == 202 and response.content == b""


async def test_batch_outside_2025_03_26_gets_400(live: LiveServer, client: httpx.AsyncClient) -> None:
    session_id = await open_session(client, live.url, "2025-06-18")
    response = await client.post(
        live.url, headers=session_headers(session_id, "2025-06-18"), json=[request(1, "ping")]
    )
    assert_jsonrpc_error(response, 400, -32600)


async def test_initialize_inside_a_batch_gets_400(live: LiveServer, client: httpx.AsyncClient) -> None:
    response = await client.post(live.url, headers=POST_HEADERS, json=[initialize_message("2025-03-26")])
    assert_jsonrpc_error(response, 400, -32600)


# -- Origin / Host (DNS rebinding) -------------------------------------------------------------
async def test_foreign_host_gets_421(live: LiveServer, client: httpx.AsyncClient) -> None:
    headers = {**POST_HEADERS, "host": "evil.example.com", "origin": "http://evil.example.com"}
    response = await client.post(live.url, headers=headers, json=initialize_message())
    assert_jsonrpc_error(response, 421, -32600)
    # The body names the setting to change (docs/troubleshooting.md).
    assert "'evil.example.com' (not in MCP_ALLOWED_HOSTS)" in response.json()["error"]["message"]


async def test_foreign_origin_gets_403(live: LiveServer, client: httpx.AsyncClient) -> None:
    headers = {**POST_HEADERS, "origin": "http://evil.example.com"}
    response = await client.post(live.url, headers=headers, json=initialize_message())
    assert_jsonrpc_error(response, 403, -32600)
    assert "(not in MCP_ALLOWED_ORIGINS)" in response.json()["error"]["message"]


async def test_loopback_origin_and_host_are_accepted(live: LiveServer, client: httpx.AsyncClient) -> None:
    for origin in (f"http://127.0.0.1:{live.port}", "http://localhost:3000"):
        headers = {**POST_HEADERS, "host": f"127.0.0.1:{live.port}", "origin": origin}
        response = await client.post(live.url, headers=headers, json=initialize_message())
        assert response.status_code == 200, (origin, response.text)
    headers = {**POST_HEADERS, "host": f"localhost:{live.port}"}
    assert (await client.post(live.url, headers=headers, json=initialize_message())).status_code == 200


# -- GET / DELETE basics -----------------------------------------------------------------------
async def test_get_without_event_stream_accept_gets_406(live: LiveServer, client: httpx.AsyncClient) -> None:
    session_id = await open_session(client, live.url)
    response = await client.get(
        live.url, headers={**session_headers(session_id), "accept": "application/json"}
    )
    assert_jsonrpc_error(response, 406, -32600)


async def test_get_without_session_gets_400(live: LiveServer, client: httpx.AsyncClient) -> None:
    response = await client.get(live.url, headers={"accept": "text/event-stream"})
    assert_jsonrpc_error(response, 400, -32600)


async def test_get_and_delete_as_2026_07_28_get_405(live: LiveServer, client: httpx.AsyncClient) -> None:
    session_id = await open_session(client, live.url)
    headers = {**session_headers(session_id, "2026-07-28"), "accept": "text/event-stream"}
    assert (await client.get(live.url, headers=headers)).status_code == 405
    assert (await client.delete(live.url, headers=headers)).status_code == 405
