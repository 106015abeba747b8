"""Issue 37 item 2: a task is reached only through a credential whose grant holds its tool.

A real server (``MCP_AUTH=oauth`` against a local JWKS, the conformance registry on SQLite).
Alice holds two tokens: ``mcp`` (every tool) and ``mcp:narrow`` (``test_simple_text`` only).
Her tasks of ``slow_compute`` and ``confirm_delete``, made with the wide token, are unknown ids
to the narrow one on every task method — ``tasks/get`` (the result is inlined there),
``tasks/update`` (an answer would run the tool again), ``tasks/cancel``, 2025-11-25
``tasks/result`` and ``tasks/list``, and ``subscriptions/listen`` task notifications — and
nothing the narrow token sent changed them: the wide token still finds the question
outstanding and the run going. A token of a scope holding ``slow_compute`` reaches that task
and not the other.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest

from tests.integration.test_auth_oauth import AuthorizationServer
from tests.support import REGISTRY_PROVIDER, LiveServer
from tests.support.mcp_http import (
    POST_HEADERS,
    initialize_message,
    modern_headers,
    modern_message,
    next_data,
    notification,
    request,
    session_headers,
    sse_events,
)
from tests.support.polling import eventually
from tests.support.ports import free_port

pytestmark = pytest.mark.timeout(120)
WAIT = 15.0
TASKS = {"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}}
SCOPES = {
    "mcp": {},
    "mcp:narrow": {"tools": ["test_simple_text"], "resources": [], "prompts": []},
    "mcp:compute": {"tools": ["slow_compute"], "resources": [], "prompts": []},
}


@pytest.fixture(scope="module")
def auth_server() -> Iterator[AuthorizationServer]:
    server = AuthorizationServer()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def live(auth_server: AuthorizationServer) -> Iterator[LiveServer]:
    port = free_port()
    env = {"MCP_AUTH": "oauth", "MCP_OAUTH_ISSUER": auth_server.issuer,
           "MCP_OAUTH_JWKS_URL": f"{auth_server.issuer}/jwks.json",
           "MCP_RESOURCE_URL": f"http://127.0.0.1:{port}/mcp", "MCP_OAUTH_SCOPES": json.dumps(SCOPES)}
    server = LiveServer(env=env, provider=REGISTRY_PROVIDER, port=port, load=[["load_conformance"]]).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=WAIT) as c:
        yield c


def bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


async def modern(
    client: httpx.AsyncClient, live: LiveServer, token: str, method: str, params: dict[str, Any]
) -> dict[str, Any]:
    message = modern_message(1, method, params, TASKS)
    response = await client.post(live.url, headers={**modern_headers(message), **bearer(token)}, json=message)
    assert response.status_code in (200, 400), response.text  # 400: a JSON-RPC error (-32602)
    body: dict[str, Any] = response.json()
    return body


async def status(client: httpx.AsyncClient, live: LiveServer, token: str, task_id: str) -> dict[str, Any]:
    task: dict[str, Any] = (await modern(client, live, token, "tasks/get", {"taskId": task_id}))["result"]
    return task


async def test_a_narrower_token_of_the_same_user_reaches_no_task_of_a_tool_it_cannot_call(
    live: LiveServer, auth_server: AuthorizationServer, client: httpx.AsyncClient
) -> None:
    wide = auth_server.token(live.url, scope="mcp", sub="alice")
    narrow = auth_server.token(live.url, scope="mcp:narrow", sub="alice")
    compute = auth_server.token(live.url, scope="mcp:compute", sub="alice")
    running = (await modern(client, live, wide, "tools/call",
                            {"name": "slow_compute", "arguments": {"seconds": 60}}))["result"]
    asking = (await modern(client, live, wide, "tools/call",
                           {"name": "confirm_delete", "arguments": {"filename": "a.txt"}}))["result"]
    assert running["resultType"] == asking["resultType"] == "task"

    async def parked() -> bool:
        return (await status(client, live, wide, asking["taskId"]))["status"] == "input_required"

    await eventually(parked, WAIT)
    unknown = await modern(client, live, narrow, "tasks/get", {"taskId": "no-such-task"})
    for task_id in (running["taskId"], asking["taskId"]):
        got = await modern(client, live, narrow, "tasks/get", {"taskId": task_id})
        assert got.get("error") == unknown["error"], got  # exactly an unknown id: no oracle
        cancelled = await modern(client, live, narrow, "tasks/cancel", {"taskId": task_id})
        assert cancelled["error"]["code"] == -32602
    answer = {"confirm": {"action": "accept", "content": {"confirm": True}}}
    updated = await modern(client, live, narrow, "tasks/update",
                           {"taskId": asking["taskId"], "inputResponses": answer})
    assert updated["error"]["code"] == -32602
    # Nothing the narrow token sent took effect.
    assert (await status(client, live, wide, running["taskId"]))["status"] == "working"
    still = await status(client, live, wide, asking["taskId"])
    assert still["status"] == "input_required" and list(still["inputRequests"]) == ["confirm"]
    # A scope holding slow_compute reaches that task, and only that one.
    assert (await status(client, live, compute, running["taskId"]))["status"] == "working"
    assert (await modern(client, live, compute, "tasks/get", {"taskId": asking["taskId"]}))["error"]
    # subscriptions/listen: the narrow token's stream follows neither task.
    message = modern_message(9, "subscriptions/listen",
                             {"notifications": {"taskIds": [running["taskId"], asking["taskId"]]}}, TASKS)
    headers = {**modern_headers(message), **bearer(narrow)}
    async with client.stream("POST", live.url, headers=headers, json=message) as stream:
        ack = (await next_data(sse_events(stream), WAIT)).message
        assert ack["method"] == "notifications/subscriptions/acknowledged"
        assert "taskIds" not in ack["params"]["notifications"], ack
    await modern(client, live, wide, "tasks/cancel", {"taskId": running["taskId"]})
    await modern(client, live, wide, "tasks/cancel", {"taskId": asking["taskId"]})


async def test_a_2025_11_25_session_lists_and_reads_only_the_tasks_its_token_reaches(
    live: LiveServer, auth_server: AuthorizationServer, client: httpx.AsyncClient
) -> None:
    wide = auth_server.token(live.url, scope="mcp", sub="bob")
    narrow = auth_server.token(live.url, scope="mcp:narrow", sub="bob")
    opened = await client.post(live.url, headers={**POST_HEADERS, **bearer(wide)},
                               json=initialize_message("2025-11-25", {"tasks": {}}))
    sid = opened.headers["mcp-session-id"]
    await client.post(live.url, headers={**session_headers(sid), **bearer(wide)},
                      json=notification("notifications/initialized"))

    async def legacy(token: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
        response = await client.post(live.url, headers={**session_headers(sid), **bearer(token)},
                                     json=request(1, method, params))
        assert response.status_code in (200, 400), response.text
        if response.headers["content-type"].startswith("text/event-stream"):
            async for event in sse_events(response):
                if event.data and "id" in json.loads(event.data):
                    body: dict[str, Any] = json.loads(event.data)
                    return body
        return dict(response.json())

    call = {"name": "slow_compute", "arguments": {"seconds": 0.2}, "task": {}}
    made = await legacy(wide, "tools/call", call)
    task_id = made["result"]["task"]["taskId"]
    assert (await legacy(wide, "tasks/result", {"taskId": task_id}))["result"]["content"]
    assert task_id in {t["taskId"] for t in (await legacy(wide, "tasks/list", {}))["result"]["tasks"]}
    assert task_id not in {t["taskId"] for t in (await legacy(narrow, "tasks/list", {}))["result"]["tasks"]}
    assert (await legacy(narrow, "tasks/result", {"taskId": task_id}))["error"]["code"] == -32602
    assert (await legacy(narrow, "tasks/get", {"taskId": task_id}))["error"]["code"] == -32602
