"""2026-07-28 across worker processes: input-required retries landing on another worker, and
``subscriptions/listen`` streams fed by changes committed on another worker.

Three uvicorn workers (A, B; and C with ``MCP_REQUEST_STATE_TTL=0``, so every state it seals is
already expired) share one PostgreSQL database and one private Redis, with the conformance
registry. Every request goes to the worker the test names. Raw httpx, so status codes and
JSON-RPC codes are what is checked (basic/patterns/mrtr.mdx, basic/patterns/subscriptions.mdx,
basic/transports/streamable-http.mdx). The official SDK client in its modern mode does a tour
with elicitation, sampling and roots answered through input-required results.

Skipped without PostgreSQL on 127.0.0.1:5432 or without redis-server.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest

from tests.support import REGISTRY_PROVIDER, LiveServer
from tests.support.fleets import running_fleet
from tests.support.mcp_http import (
    SSEEvent,
    modern_headers,
    modern_message,
    next_comment,
    next_data,
    sse_events,
)
from tests.support.postgres import temporary_database
from tests.support.private_redis import have_redis_server

pytestmark = [
    pytest.mark.timeout(90),
    pytest.mark.skipif(not have_redis_server(), reason="needs redis-server and redis-cli"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]
KEEPALIVE = 0.5  # s
WAIT = 10.0  # s: the deadline of every wait
ALL_CAPS = {"elicitation": {}, "sampling": {}, "roots": {}}
SUB = "io.modelcontextprotocol/subscriptionId"


@pytest.fixture(scope="module")
def database_url() -> Iterator[str]:
    with temporary_database("mcpsite_modern") as url:
        yield url


@pytest.fixture(scope="module")
def workers(database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[LiveServer]]:
    directory = tmp_path_factory.mktemp("redis")
    options = {"provider": REGISTRY_PROVIDER, "database_url": database_url, "keepalive": KEEPALIVE}
    with running_fleet(directory, **options) as fleet:
        fleet.migrate()
        fleet.manage("load_conformance")
        a, b = fleet.start(2)
        c = fleet.worker(MCP_REQUEST_STATE_TTL="0")  # every state it seals is already expired
        yield [a, b, c]


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=WAIT) as c:
        yield c


async def call_tool(
    client: httpx.AsyncClient,
    server: LiveServer,
    id: int,
    name: str,
    caps: dict[str, Any] | None = None,
    **extra: Any,
) -> httpx.Response:
    message = modern_message(
        id, "tools/call", {"name": name, "arguments": {}, **extra}, ALL_CAPS if caps is None else caps
    )
    return await client.post(server.url, headers=modern_headers(message), json=message)


def accept(**content: Any) -> dict[str, Any]:
    return {"action": "accept", "content": content}


# -- input-required results ------------------------------------------------------------------------
async def test_a_multi_round_call_completes_with_each_retry_on_another_worker(
    workers: list[LiveServer], client: httpx.AsyncClient
) -> None:
    a, b, _ = workers
    name = "test_input_required_result_multi_round"
    first = (await call_tool(client, a, 1, name)).json()["result"]
    assert first["resultType"] == "input_required" and list(first["inputRequests"]) == ["step1"]
    second = await call_tool(
        client, b, 2, name, inputResponses={"step1": accept(name="Ada")}, requestState=first["requestState"]
    )
    assert second.status_code == 200, second.text
    assert list(second.json()["result"]["inputRequests"]) == ["step2"]
    third = await call_tool(
        client,
        a,
        3,
        name,
        inputResponses={"step2": accept(color="green")},
        requestState=second.json()["result"]["requestState"],
    )
    result = third.json()["result"]
    assert result["resultType"] == "complete" and result["content"][0]["text"] == "Ada likes green"


async def test_a_tampered_request_state_gets_400_with_32602(
    workers: list[LiveServer], client: httpx.AsyncClient
) -> None:
    a, b, _ = workers
    name = "test_input_required_result_tampered_state"
    state = (await call_tool(client, a, 1, name)).json()["result"]["requestState"]
    payload, kid, mac = state.split(".")
    forged = f"{payload[:-2]}{'A' if payload[-2] != 'A' else 'B'}{payload[-1]}.{kid}.{mac}"
    response = await call_tool(
        client, b, 2, name, inputResponses={"confirm": accept(ok=True)}, requestState=forged
    )
    assert response.status_code == 400
    body = response.json()
    assert body["id"] == 2 and body["error"]["code"] == -32602 and "integrity" in body["error"]["message"]


async def test_an_expired_request_state_gets_400_with_32602(
    workers: list[LiveServer], client: httpx.AsyncClient
) -> None:
    c = workers[2]  # seals with a TTL of 0: expired when it comes back
    name = "test_input_required_result_request_state"
    state = (await call_tool(client, c, 1, name)).json()["result"]["requestState"]
    await asyncio.sleep(1.1)  # expiry has a resolution of one second (its payload holds Unix seconds)
    response = await call_tool(
        client, c, 2, name, inputResponses={"confirm": accept(ok=True)}, requestState=state
    )
    assert (response.status_code, response.json()["error"]["code"]) == (400, -32602)
    assert "expired" in response.json()["error"]["message"]


async def test_a_state_replayed_for_other_arguments_gets_32602(
    workers: list[LiveServer], client: httpx.AsyncClient
) -> None:
    a, b, _ = workers
    name = "test_input_required_result_elicitation"
    state = (await call_tool(client, a, 1, name)).json()["result"]["requestState"]
    params = {"name": "test_input_required_result_sampling", "arguments": {}, "requestState": state}
    message = modern_message(2, "tools/call", params, ALL_CAPS)
    response = await client.post(b.url, headers=modern_headers(message), json=message)
    assert (response.status_code, response.json()["error"]["code"]) == (400, -32602)


async def test_an_undeclared_capability_gets_400_with_32021(
    workers: list[LiveServer], client: httpx.AsyncClient
) -> None:
    response = await call_tool(client, workers[0], 5, "test_missing_capability", caps={})
    assert response.status_code == 400
    assert response.json()["id"] == 5 and response.json()["error"]["code"] == -32021
    assert response.json()["error"]["data"] == {"requiredCapabilities": {"sampling": {}}}


async def test_the_request_stream_carries_progress_and_the_result_but_never_a_request(
    workers: list[LiveServer], client: httpx.AsyncClient
) -> None:
    message = modern_message(
        6, "tools/call", {"name": "test_streaming_elicitation", "arguments": {}}, ALL_CAPS, progressToken="p"
    )
    async with client.stream("POST", workers[0].url, headers=modern_headers(message), json=message) as r:
        frames = [e.message async for e in sse_events(r) if e.data]
    assert [f.get("method") for f in frames] == ["notifications/progress", None]
    assert frames[-1]["id"] == 6 and frames[-1]["result"]["resultType"] == "input_required"


# -- subscriptions/listen --------------------------------------------------------------------------
async def open_listen(
    client: httpx.AsyncClient, server: LiveServer, id: int | str, notifications: dict[str, Any]
) -> tuple[httpx.Response, AsyncIterator[SSEEvent]]:
    message = modern_message(id, "subscriptions/listen", {"notifications": notifications})
    request = client.build_request("POST", server.url, headers=modern_headers(message), json=message)
    response = await client.send(request, stream=True)
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/event-stream")
    events = sse_events(response)
    ack = (await next_data(events, WAIT)).message
    assert ack["method"] == "notifications/subscriptions/acknowledged" and ack["params"]["_meta"][SUB] == id
    return response, events


async def test_a_listen_stream_on_b_gets_changes_committed_on_a_once_in_order_and_filtered(
    workers: list[LiveServer], client: httpx.AsyncClient
) -> None:
    a, b, _ = workers
    both, both_events = await open_listen(
        client, b, "both", {"toolsListChanged": True, "promptsListChanged": True}
    )
    prompts_only, prompts_events = await open_listen(client, b, 9, {"promptsListChanged": True})
    try:
        assert (await call_tool(client, a, 10, "test_trigger_tool_change")).status_code == 200
        assert (await call_tool(client, a, 11, "test_trigger_prompt_change")).status_code == 200
        first = (await next_data(both_events, WAIT)).message
        second = (await next_data(both_events, WAIT)).message
        assert [first["method"], second["method"]] == [
            "notifications/tools/list_changed",
            "notifications/prompts/list_changed",
        ]
        assert first["params"]["_meta"][SUB] == "both" and "id" not in first
        only = (await next_data(prompts_events, WAIT)).message
        assert only["method"] == "notifications/prompts/list_changed" and only["params"]["_meta"][SUB] == 9
        for events in (both_events, prompts_events):  # exactly once: then only keep-alives
            await next_comment(events, WAIT)
            await next_comment(events, WAIT)
    finally:
        await both.aclose()
        await prompts_only.aclose()


async def test_discover_reports_the_change_notifications_listen_delivers(
    workers: list[LiveServer], client: httpx.AsyncClient
) -> None:
    message = modern_message(12, "server/discover")
    discovered = await client.post(workers[1].url, headers=modern_headers(message), json=message)
    capabilities = discovered.json()["result"]["capabilities"]
    assert capabilities["tools"] == {"listChanged": True}
    assert capabilities["resources"] == {"subscribe": True, "listChanged": True}


# -- the official SDK client, modern mode -----------------------------------------------------------
async def test_sdk_client_in_modern_mode_answers_input_requests_through_mrtr(
    workers: list[LiveServer],
) -> None:
    from mcp import types
    from mcp.client.client import Client

    asked: list[str] = []

    async def on_elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"name": "Ada", "color": "teal"})

    async def on_sample(context: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        asked.append("sampling")
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text="Hi"),
            model="m",
            stop_reason="endTurn",
        )

    async def on_roots(context: Any) -> types.ListRootsResult:
        asked.append("roots")
        return types.ListRootsResult(roots=[types.Root(uri="file:///work", name="work")])

    async with asyncio.timeout(30):
        async with Client(
            workers[0].url,
            mode="2026-07-28",
            elicitation_callback=on_elicit,
            sampling_callback=on_sample,
            list_roots_callback=on_roots,
        ) as client:
            tools = await client.list_tools()
            assert "test_input_required_result_multi_round" in {t.name for t in tools.tools}
            result = await client.call_tool("test_input_required_result_multi_round", {})
            assert result.content[0].text == "Ada likes teal"
            result = await client.call_tool("test_input_required_result_multiple_inputs", {})
            assert result.content[0].text == "Hi Ada (1 roots)"
            prompt = await client.get_prompt("test_input_required_result_prompt", {})
            assert "Use this context" in prompt.messages[0].content.text
    assert asked[:2] == ["Step 1: What is your name?", "Step 2: What is your favorite color?"]
    assert {"sampling", "roots"} <= set(asked)
