"""A mirrored tool called as a task on a fleet (issue 40 item 4, "tasks passed through": the part
that keeps a task's result right on any worker), end to end: the official Python SDK upstream as a
process of its own (``tests/support/sdk_upstream_process.py``, no task support of its own), two
mcpsite workers sharing PostgreSQL and Redis, raw HTTP in the 2026-07-28 era with the tasks
extension declared.

The task is made on worker A, whose run calls the upstream; ``tasks/get`` on worker B sees it
working, then completed with the upstream's result, from the shared task store; a task cancelled
from B stops A's upstream call (the upstream records ``cancelled``).

Skipped without PostgreSQL on 127.0.0.1:5432 or without redis-server.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest

from tests.support import REGISTRY_PROVIDER, LiveServer
from tests.support.fleets import Fleet, running_fleet
from tests.support.mcp_http import modern_headers, modern_message, sse_events
from tests.support.polling import eventually, within
from tests.support.postgres import temporary_database
from tests.support.private_redis import have_redis_server
from tests.support.sdk_upstream_process import UpstreamProcess
from tests.support.upstream_rows import mirror_script

pytestmark = [
    pytest.mark.timeout(180),
    pytest.mark.skipif(not have_redis_server(), reason="needs redis-server and redis-cli"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]
WAIT = 20.0
TASKS = {"extensions": {"io.modelcontextprotocol/tasks": {}}}
# The operator makes the mirrored slow tool task-capable: our own durable task wraps its call.
OPTIONAL = ("from registry.models import Tool; "
            "Tool.objects.filter(name='up_slow').update(task_support='optional')")


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fleet]:
    with UpstreamProcess() as upstream, temporary_database("mcpsite_uptasks") as url:
        options = {"provider": REGISTRY_PROVIDER, "database_url": url}
        with running_fleet(tmp_path_factory.mktemp("redis"), **options) as fleet:
            fleet.migrate()
            fleet.manage("shell", "-c", mirror_script("up", upstream.url, tools=("slow", "recorded"),
                                                      resources=False, timeout=20.0))
            fleet.manage("shell", "-c", OPTIONAL)
            fleet.start(2, REGISTRY_HTTP_ALLOWED_HOSTS="127.0.0.1")
            yield fleet


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=WAIT) as c:
        yield c


async def modern(client: httpx.AsyncClient, server: LiveServer, method: str,
                 params: dict[str, Any]) -> dict[str, Any]:
    message = modern_message(1, method, params, TASKS)
    async with client.stream("POST", server.url, headers=modern_headers(message), json=message) as response:
        if response.headers.get("content-type", "").startswith("application/json"):
            body: dict[str, Any] = json.loads(await response.aread())
            return body
        async for event in sse_events(response):
            if event.data and "id" in (found := json.loads(event.data)):
                return dict(found)
    raise AssertionError("no response")


async def until(client: httpx.AsyncClient, server: LiveServer, task_id: str,
                *statuses: str) -> dict[str, Any]:
    async def poll() -> dict[str, Any]:
        while True:
            task: dict[str, Any] = (await modern(client, server, "tasks/get", {"taskId": task_id}))["result"]
            if task["status"] in statuses:
                return task
            await asyncio.sleep(0.1)

    return await within(poll(), WAIT)


async def test_a_mirrored_tools_task_made_on_a_completes_with_the_upstreams_result_on_b(
        fleet: Fleet, client: httpx.AsyncClient) -> None:
    a, b = fleet.servers[:2]
    created = (await modern(client, a, "tools/call", {
        "name": "up_slow", "arguments": {"seconds": 1.5, "steps": 1, "key": "task-done"}}))["result"]
    assert created["resultType"] == "task" and created["status"] == "working", created
    seen = (await modern(client, b, "tasks/get", {"taskId": created["taskId"]}))["result"]
    assert seen["status"] == "working"
    done = await until(client, b, created["taskId"], "completed", "failed")
    assert done["status"] == "completed", done
    assert done["result"]["content"][0]["text"] == "slept 1.5"
    assert done["result"].get("isError") in (None, False)


async def test_a_mirrored_tools_task_cancelled_on_b_stops_the_upstream_call_made_on_a(
        fleet: Fleet, client: httpx.AsyncClient) -> None:
    a, b = fleet.servers[:2]
    created = (await modern(client, a, "tools/call", {
        "name": "up_slow", "arguments": {"seconds": 30, "steps": 1, "key": "task-cancel"}}))["result"]
    assert created["resultType"] == "task", created
    cancelled = await modern(client, b, "tasks/cancel", {"taskId": created["taskId"]})
    assert "result" in cancelled, cancelled
    assert (await until(client, a, created["taskId"], "cancelled"))["status"] == "cancelled"

    async def upstream_saw_it() -> bool:
        result = (await modern(client, b, "tools/call", {"name": "up_recorded",
                                                         "arguments": {"key": "task-cancel"}}))["result"]
        return "cancelled" in json.dumps(result)

    await eventually(upstream_saw_it, seconds=WAIT, step=0.2)
