"""Tasks across worker processes (issue 26): the extension io.modelcontextprotocol/tasks
(SEP-2663) and 2025-11-25 tasks on one shared Redis task store.

Three uvicorn workers share one PostgreSQL database (the conformance registry, plus
``slow_once``: ``slow_compute`` without ``idempotentHint``) and one private Redis, with a task
lease of ``LEASE`` seconds. A task made on A is polled, answered and cancelled on B; a worker
killed with SIGKILL mid-task has its idempotent task run again on another worker and its other
task end ``failed`` with a retryable error, both well within the lease (never ``working``
forever). A ``subscriptions/listen`` stream on B hears (``notifications/tasks``) every transition
of a task run on A. The 2025-11-25 methods are checked over raw HTTP in a session served by two
workers, and with the official TypeScript SDK's experimental tasks client (the Python SDK v2 has
none); a 2025-11-25 task's question, parked on A, goes out on a ``tasks/result`` stream on B and
its answer, POSTed to C, resumes the task (tasks.mdx "Input Required Status"). While Redis is
down the task methods answer 503; afterwards a task is there or not as
Redis' persistence kept it (this Redis keeps nothing: -32602). Raw httpx otherwise, so the status
and JSON-RPC codes are what is checked.

Skipped without PostgreSQL on 127.0.0.1:5432 or without redis-server.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support import REGISTRY_PROVIDER, LiveServer, conformance
from tests.support.fleets import Fleet, kill9, running_fleet
from tests.support.mcp_http import (
    modern_headers,
    modern_message,
    next_data,
    open_session,
    request,
    session_headers,
    sse_events,
    stream_headers,
)
from tests.support.polling import eventually, within
from tests.support.postgres import temporary_database
from tests.support.private_redis import have_redis_server

pytestmark = [
    pytest.mark.timeout(120),
    pytest.mark.skipif(not have_redis_server(), reason="needs redis-server and redis-cli"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]
LEASE = 1.5  # s
WAIT = 15.0  # s: the deadline of every wait
TASKS = {"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}}
SLOW_ONCE = (
    "from registry.models import Tool; Tool.objects.update_or_create(name='slow_once', defaults=dict("
    "kind='handler', handler='conformance.slow_compute', task_support='optional', description='d', "
    "input_schema={'type': 'object', 'properties': {'seconds': {'type': 'number'}}}))"
)


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fleet]:
    with temporary_database("mcpsite_tasks") as url:
        options = {"provider": REGISTRY_PROVIDER, "database_url": url}
        with running_fleet(tmp_path_factory.mktemp("redis"), **options) as fleet:
            fleet.migrate()
            fleet.manage("load_conformance")
            fleet.manage("shell", "-c", SLOW_ONCE)
            fleet.start(3, MCP_TASK_LEASE_SECONDS=str(LEASE))
            yield fleet


@pytest.fixture
def fleet_workers(fleet: Fleet) -> list[LiveServer]:
    return fleet.servers[:3]


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=WAIT) as c:
        yield c


async def answer(response: httpx.Response) -> dict[str, Any]:
    """The JSON-RPC response, whether sent as JSON or on an event stream."""
    if response.headers.get("content-type", "").startswith("application/json"):
        body: dict[str, Any] = json.loads(await response.aread())
        return body
    async for event in sse_events(response):
        if event.data:
            message: dict[str, Any] = json.loads(event.data)
            if "id" in message:
                return message
    raise AssertionError("no response on the stream")


async def modern(
    client: httpx.AsyncClient,
    server: LiveServer,
    method: str,
    params: dict[str, Any],
    caps: dict[str, Any] = TASKS,
) -> dict[str, Any]:
    message = modern_message(1, method, params, caps)
    async with client.stream("POST", server.url, headers=modern_headers(message), json=message) as response:
        return await answer(response)


async def call(client: httpx.AsyncClient, server: LiveServer, name: str, **arguments: Any) -> dict[str, Any]:
    result: dict[str, Any] = (
        await modern(client, server, "tools/call", {"name": name, "arguments": arguments})
    )["result"]
    return result


async def until(
    client: httpx.AsyncClient, server: LiveServer, task_id: str, *statuses: str
) -> dict[str, Any]:
    async def poll() -> dict[str, Any]:
        while True:
            task: dict[str, Any] = (await modern(client, server, "tasks/get", {"taskId": task_id}))["result"]
            if task["status"] in statuses:
                return task
            await asyncio.sleep(0.1)

    return await within(poll(), WAIT)


# -- one task, three workers ------------------------------------------------------------------------
async def test_a_task_made_on_a_is_answered_on_b_and_completes_where_it_was_answered(
    fleet_workers: list[LiveServer], client: httpx.AsyncClient
) -> None:
    a, b, _ = fleet_workers
    created = await call(client, a, "confirm_delete", filename="report.txt")
    assert created["resultType"] == "task" and created["status"] == "working"
    parked = await until(client, b, created["taskId"], "input_required")
    assert list(parked["inputRequests"]) == ["confirm"]
    ack = await modern(
        client,
        b,
        "tasks/update",
        {
            "taskId": created["taskId"],
            "inputResponses": {"confirm": {"action": "accept", "content": {"confirm": True}}},
        },
    )
    assert ack["result"]["resultType"] == "complete"
    done = await until(client, a, created["taskId"], "completed")
    assert done["result"]["content"][0]["text"] == "Deleted report.txt"
    # Metrics: A made it and its run parked it; B's run completed it. B counts the run once its
    # store write returns, which can be a moment after A already reads the task as completed.
    scraped_a = (await client.get(a.base_url + "/metrics")).text
    assert "mcp_tasks_created_total 1.0" in scraped_a
    assert 'mcp_tasks_finished_total{status="input_required"} 1.0' in scraped_a

    async def counted_on_b() -> bool:
        scraped_b = (await client.get(b.base_url + "/metrics")).text
        return 'mcp_tasks_finished_total{status="completed"} 1.0' in scraped_b

    await eventually(counted_on_b, WAIT)


async def test_a_task_running_on_a_is_cancelled_from_b(
    fleet_workers: list[LiveServer], client: httpx.AsyncClient
) -> None:
    a, b, _ = fleet_workers
    created = await call(client, a, "slow_compute", seconds=60)
    ack = await modern(client, b, "tasks/cancel", {"taskId": created["taskId"]})
    assert ack["result"]["resultType"] == "complete"
    assert (await until(client, a, created["taskId"], "cancelled", "completed"))["status"] == "cancelled"
    again = await modern(client, a, "tasks/cancel", {"taskId": created["taskId"]})
    assert "result" in again  # idempotent


async def test_task_methods_need_the_extension_and_a_known_id(
    fleet_workers: list[LiveServer], client: httpx.AsyncClient
) -> None:
    a, b, _ = fleet_workers
    created = await call(client, a, "slow_compute", seconds=5)
    without = await modern(client, b, "tasks/get", {"taskId": created["taskId"]}, caps={})
    assert without["error"]["code"] == -32021
    assert without["error"]["data"]["requiredCapabilities"] == {
        "extensions": {"io.modelcontextprotocol/tasks": {}}
    }
    unknown = await modern(client, b, "tasks/get", {"taskId": created["taskId"] + "x"})
    assert unknown["error"]["code"] == -32602
    await modern(client, b, "tasks/cancel", {"taskId": created["taskId"]})


async def test_a_listen_stream_on_b_hears_every_transition_of_a_task_run_on_a(
    fleet_workers: list[LiveServer], client: httpx.AsyncClient
) -> None:
    a, b, _ = fleet_workers
    task_id = (await call(client, a, "confirm_delete", filename="x.txt"))["taskId"]
    await until(client, a, task_id, "input_required")
    listen = {"notifications": {"taskIds": [task_id, "someone-elses"]}}
    refused = await modern(client, b, "subscriptions/listen", listen, caps={})
    assert refused["error"]["code"] == -32021
    message = modern_message(7, "subscriptions/listen", listen, TASKS)
    async with client.stream("POST", b.url, headers=modern_headers(message), json=message) as response:
        events = sse_events(response)
        ack = (await next_data(events, WAIT)).message
        assert ack["method"] == "notifications/subscriptions/acknowledged"
        assert ack["params"]["notifications"]["taskIds"] == [task_id]  # only what it may read
        now = (await next_data(events, WAIT)).message
        assert now["method"] == "notifications/tasks" and now["params"]["status"] == "input_required"
        assert list(now["params"]["inputRequests"]) == ["confirm"]
        answer = {"confirm": {"action": "accept", "content": {"confirm": False}}}
        await modern(client, a, "tasks/update", {"taskId": task_id, "inputResponses": answer})
        seen = []
        while not seen or seen[-1]["status"] != "completed":
            seen.append((await next_data(events, WAIT)).message["params"])
        assert seen[-1]["result"]["content"][0]["text"] == "Kept x.txt"  # the DetailedTask, inlined


# -- 2025-11-25 ---------------------------------------------------------------------------------------
async def test_2025_11_25_task_methods_over_one_session_served_by_two_workers(
    fleet_workers: list[LiveServer], client: httpx.AsyncClient
) -> None:
    a, b, _ = fleet_workers
    sid = await open_session(client, a.url, capabilities={"tasks": {}})

    async def legacy(server: LiveServer, id: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
        async with client.stream(
            "POST", server.url, headers=session_headers(sid), json=request(id, method, params)
        ) as response:
            return await answer(response)

    created = await legacy(
        a, 1, "tools/call", {"name": "slow_compute", "arguments": {"seconds": 0.3}, "task": {"ttl": 60_000}}
    )
    task = created["result"]["task"]
    assert task["status"] == "working" and task["ttl"] == 60_000 and "pollInterval" in task
    got = await legacy(b, 2, "tasks/get", {"taskId": task["taskId"]})
    assert got["result"]["taskId"] == task["taskId"] and "result" not in got["result"]
    result = await legacy(b, 3, "tasks/result", {"taskId": task["taskId"]})  # blocks until done
    assert result["result"]["content"][0]["text"].startswith("Computed")
    assert result["result"]["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": task["taskId"]}
    listed = await legacy(a, 4, "tasks/list", {})
    assert task["taskId"] in {t["taskId"] for t in listed["result"]["tasks"]}
    terminal = await legacy(b, 5, "tasks/cancel", {"taskId": task["taskId"]})
    assert terminal["error"]["code"] == -32602  # tasks.mdx: a terminal task MUST NOT be cancelled
    forbidden = await legacy(a, 6, "tools/call", {"name": "greet", "arguments": {}, "task": {}})
    assert forbidden["error"]["code"] == -32601
    # notifications/tasks/status (tasks.mdx: MAY) on the session's GET stream, held on B, for a
    # task run on A.
    async with client.stream("GET", b.url, headers=stream_headers(sid)) as stream:
        events = sse_events(stream)
        second = await legacy(
            a, 7, "tools/call", {"name": "slow_compute", "arguments": {"seconds": 0.2}, "task": {}}
        )
        statuses = []
        while "completed" not in statuses:
            message = (await next_data(events, WAIT)).message
            if message.get("method") == "notifications/tasks/status":
                assert message["params"]["taskId"] == second["result"]["task"]["taskId"]
                statuses.append(message["params"]["status"])


async def in_session(
    client: httpx.AsyncClient, server: LiveServer, sid: str, message: dict[str, Any]
) -> dict[str, Any]:
    """POST one request of the 2025-11-25 session ``sid``; its JSON-RPC response."""
    async with client.stream("POST", server.url, headers=session_headers(sid), json=message) as response:
        return await answer(response)


async def legacy_until(
    client: httpx.AsyncClient, server: LiveServer, sid: str, task_id: str, *statuses: str
) -> dict[str, Any]:
    async def poll() -> dict[str, Any]:
        while True:
            got = await in_session(client, server, sid, request("get", "tasks/get", {"taskId": task_id}))
            task: dict[str, Any] = got["result"]
            if task["status"] in statuses:
                return task
            await asyncio.sleep(0.1)

    return await within(poll(), WAIT)


async def test_a_2025_11_25_tasks_question_asked_on_a_goes_out_on_tasks_result_on_b_answered_on_c(
    fleet_workers: list[LiveServer], client: httpx.AsyncClient
) -> None:
    # tasks.mdx "Input Required Status": the run on A parks the task input_required; the
    # client's tasks/result on B carries the question (related-task _meta); the reply, POSTed
    # to C, reaches B through the session's bus channel; the task runs on and B's stream ends
    # with the result.
    a, b, c = fleet_workers
    sid = await open_session(client, a.url, capabilities={"tasks": {}, "elicitation": {}})
    call_ = request(
        1, "tools/call", {"name": "confirm_delete", "arguments": {"filename": "r.txt"}, "task": {}}
    )
    created = (await in_session(client, a, sid, call_))["result"]["task"]
    task_id = created["taskId"]
    assert created["status"] == "working"
    await legacy_until(client, b, sid, task_id, "input_required")
    wanted = request(2, "tasks/result", {"taskId": task_id})
    async with client.stream("POST", b.url, headers=session_headers(sid), json=wanted) as stream:
        events = sse_events(stream)
        asked = (await next_data(events, WAIT)).message
        assert asked["method"] == "elicitation/create"
        assert asked["params"]["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": task_id}
        reply = {
            "jsonrpc": "2.0",
            "id": asked["id"],
            "result": {"action": "accept", "content": {"confirm": True}},
        }
        posted = await client.post(c.url, headers=session_headers(sid), json=reply)
        assert posted.status_code == 202
        done = (await next_data(events, WAIT)).message
    assert done["id"] == 2 and done["result"]["content"][0]["text"] == "Deleted r.txt"
    assert done["result"]["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": task_id}
    assert (await legacy_until(client, a, sid, task_id, "completed"))["status"] == "completed"


async def test_a_2025_11_25_tasks_concurrent_questions_go_out_together_and_a_refusal_reaches_the_tool(
    fleet_workers: list[LiveServer], client: httpx.AsyncClient
) -> None:
    a, b, _ = fleet_workers
    sid = await open_session(client, a.url, capabilities={"tasks": {}, "elicitation": {}})
    call_ = request(1, "tools/call", {"name": "multi_input", "arguments": {}, "task": {}})
    task_id = (await in_session(client, a, sid, call_))["result"]["task"]["taskId"]
    parked = await legacy_until(client, b, sid, task_id, "input_required")
    assert "inputRequests" not in parked  # 2025-11-25: the questions come on tasks/result
    async with client.stream(
        "POST", b.url, headers=session_headers(sid), json=request(2, "tasks/result", {"taskId": task_id})
    ) as stream:
        events = sse_events(stream)
        asked = [(await next_data(events, WAIT)).message for _ in range(2)]
        by_field = {next(iter(m["params"]["requestedSchema"]["properties"])): m for m in asked}
        await client.post(
            a.url,
            headers=session_headers(sid),
            json={
                "jsonrpc": "2.0",
                "id": by_field["name"]["id"],
                "result": {"action": "accept", "content": {"name": "Ada"}},
            },
        )
        # Answered with a JSON-RPC error: on replay the tool's elicit raises, as outside a task
        # (tools.mdx: the call ends with an isError result).
        await client.post(
            a.url,
            headers=session_headers(sid),
            json={
                "jsonrpc": "2.0",
                "id": by_field["confirm"]["id"],
                "error": {"code": -1, "message": "User left"},
            },
        )
        done = (await next_data(events, WAIT)).message
    assert done["result"]["isError"] is True
    assert "elicitation/create" in done["result"]["content"][0]["text"]


def test_the_official_typescript_sdk_drives_a_2025_11_25_task(fleet_workers: list[LiveServer]) -> None:
    # The Python SDK (v2) dropped tasks; the TypeScript SDK installed with the conformance suite
    # still has the 2025-11-25 experimental tasks client.
    if not conformance.installed():
        pytest.skip("needs scripts/install-tools.sh (node and the TypeScript SDK)")
    script = Path(__file__).resolve().parents[1] / "support" / "sdk_tasks_client.mjs"
    done = subprocess.run(
        [str(conformance.NODE), str(script)],
        capture_output=True,
        text=True,
        timeout=WAIT * 2,
        env={
            **os.environ,
            "MCP_URL": fleet_workers[0].url,
            "MCP_SDK_DIR": str(conformance.TOOLS / "@modelcontextprotocol" / "sdk"),
        },
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["serverTasks"]["requests"] == {"tools": {"call": {}}}
    assert seen["messages"][0] == "taskCreated" and seen["messages"][-1] == "result", seen
    assert seen["text"].startswith("Computed") and seen["payload"] == seen["text"]
    assert seen["get"] == "completed" and seen["listed"] is True
    # A task that asks: the SDK calls tasks/result on input_required and answers the question.
    assert "input_required" in seen["asking"] and seen["asking"][-1] == "result", seen
    assert seen["answered"] == "Deleted sdk.txt"
    assert seen["elicited"] == [{"taskId": seen["askingId"]}]


# -- Redis restarts (the fleet's Redis keeps nothing: --save "", no AOF) ---------------------------
async def test_during_a_redis_outage_task_methods_get_503_and_afterwards_what_redis_kept(
    fleet: Fleet, fleet_workers: list[LiveServer], client: httpx.AsyncClient
) -> None:
    a, b, _ = fleet_workers
    before = await call(client, a, "slow_compute", seconds=60)
    fleet.redis.stop()
    try:
        message = modern_message(1, "tasks/get", {"taskId": before["taskId"]}, TASKS)
        down = await client.post(b.url, headers=modern_headers(message), json=message)
        assert down.status_code == 503
    finally:
        fleet.redis.start()

    async def answered() -> dict[str, Any]:
        while True:
            message = modern_message(1, "tasks/get", {"taskId": before["taskId"]}, TASKS)
            response = await client.post(b.url, headers=modern_headers(message), json=message)
            if response.status_code != 503:
                body: dict[str, Any] = response.json()
                return body
            await asyncio.sleep(0.1)

    # This Redis persists nothing, so the task is gone: the unknown-id answer, not a hang. With
    # AOF or RDB snapshots it would be found as their settings allow (docs/guides/tasks.md).
    assert (await within(answered(), WAIT))["error"]["code"] == -32602
    after = await call(client, b, "slow_compute", seconds=0.3)
    assert (await until(client, a, after["taskId"], "completed"))["status"] == "completed"


# -- a worker dies mid-task (last: it kills C) ------------------------------------------------------
async def test_a_dead_workers_tasks_end_within_the_lease_rerun_if_idempotent_else_failed(
    fleet_workers: list[LiveServer], client: httpx.AsyncClient
) -> None:
    a, b, c = fleet_workers
    idempotent = await call(client, c, "slow_compute", seconds=2, label="again")
    once = await call(client, c, "slow_once", seconds=30)
    kill9(c)
    loop = asyncio.get_running_loop()
    started = loop.time()
    failed = await until(client, a, once["taskId"], "failed", "completed", "cancelled")
    assert failed["status"] == "failed" and failed["error"]["data"] == {"retryable": True}
    assert loop.time() - started < LEASE * 3  # within the lease and a sweep, not the 30 s run
    done = await until(client, b, idempotent["taskId"], "completed", "failed", "cancelled")
    assert (
        done["status"] == "completed" and done["result"]["content"][0]["text"] == "Computed again after 2 s"
    )
