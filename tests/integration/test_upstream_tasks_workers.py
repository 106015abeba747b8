"""Mirrored tools called as tasks on a fleet (issue 40 item 4, "tasks passed through"), end to
end: two mcpsite workers sharing PostgreSQL and Redis, raw HTTP, and two upstreams nobody here
wrote, each a process of its own:

- the official Python SDK upstream (``tests/support/sdk_upstream_process.py``: no task support),
  its ``slow`` tool made task-capable by the operator: our own durable task wraps its call. The
  task is made on worker A; ``tasks/get`` on worker B sees it working, then completed with the
  upstream's result; a task cancelled from B stops A's upstream call (the upstream records
  ``cancelled``);
- the reference ``server-everything`` (2025-11-25 tasks: ``simulate-research-query`` requires a
  task), synced for real (``sync_upstreams``): its tool is served with ``taskSupport: required``;
  our task made on A runs the upstream's task (``upstreams/tasks.py``) and B answers ``tasks/get``
  (2026-07-28), showing the upstream task's ``statusMessage`` as it moves, and ``tasks/result``
  (a 2025-11-25 session) with the upstream's result; our
  ``tasks/cancel`` on B ends it; the upstream task's question (``ambiguous``) parks our task, is
  answered by ``tasks/update`` on B, and the task completes with the answer.

Skipped without PostgreSQL on 127.0.0.1:5432 or without redis-server.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest

from tests.support import REGISTRY_PROVIDER, LiveServer, everything
from tests.support.fleets import Fleet, running_fleet
from tests.support.mcp_http import (
    modern_headers,
    modern_message,
    open_session,
    request,
    session_headers,
    sse_events,
)
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
TASKS = {"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}}
# The operator makes the mirrored slow tool task-capable: our own durable task wraps its call.
OPTIONAL = ("from registry.models import Tool; "
            "Tool.objects.filter(name='up_slow').update(task_support='optional')")


ALLOWED = {"REGISTRY_HTTP_ALLOWED_HOSTS": "127.0.0.1"}
needs_everything = pytest.mark.skipif(not everything.installed(), reason="needs scripts/install-tools.sh")
RESEARCH = "ev_simulate-research-query"


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fleet]:
    with contextlib.ExitStack() as stack:
        upstream = stack.enter_context(UpstreamProcess())
        url = stack.enter_context(temporary_database("mcpsite_uptasks"))
        options = {"provider": REGISTRY_PROVIDER, "database_url": url}
        fleet = stack.enter_context(running_fleet(tmp_path_factory.mktemp("redis"), **options))
        fleet.migrate()
        fleet.manage("shell", "-c", mirror_script("up", upstream.url, tools=("slow", "recorded"),
                                                  resources=False, timeout=20.0))
        fleet.manage("shell", "-c", OPTIONAL)
        if everything.installed():
            reference = stack.enter_context(everything.Everything())
            fleet.manage("shell", "-c", "from registry.models import Upstream; Upstream.objects.create("
                         f"name='ev', prefix='ev', url={reference.url!r}, timeout=20.0)")
            fleet.manage("sync_upstreams", "--name", "ev", **ALLOWED)
        fleet.start(2, **ALLOWED)
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


@needs_everything
async def test_a_task_the_upstream_requires_runs_there_and_any_worker_answers_it(
        fleet: Fleet, client: httpx.AsyncClient) -> None:
    a, b = fleet.servers[:2]
    listed = (await modern(client, a, "tools/list", {}))["result"]["tools"]
    research = next(tool for tool in listed if tool["name"] == RESEARCH)
    assert research["execution"]["taskSupport"] == "required"  # the upstream's, synced
    created = (await modern(client, a, "tools/call", {"name": RESEARCH,
                                                      "arguments": {"topic": "tides"}}))["result"]
    assert created["resultType"] == "task" and created["status"] == "working", created
    done = await until(client, b, created["taskId"], "completed", "failed")
    assert done["status"] == "completed", done
    text = done["result"]["content"][0]["text"]
    assert "Research Report: tides" in text and done["result"].get("isError") in (None, False)


@needs_everything
async def test_the_upstream_tasks_status_message_shows_on_our_task_on_the_other_worker(
        fleet: Fleet, client: httpx.AsyncClient) -> None:
    """server-everything's research task moves through its stages (one a second), each its
    ``statusMessage`` on the upstream's tasks/get; our task, run on A, shows them on B."""
    a, b = fleet.servers[:2]
    stages = {"Gathering sources...", "Analyzing content...", "Synthesizing findings...",
              "Generating report..."}
    created = (await modern(client, a, "tools/call", {"name": RESEARCH,
                                                      "arguments": {"topic": "coral"}}))["result"]
    assert created["resultType"] == "task", created
    seen: list[str] = []

    async def two_stages_seen() -> bool:
        task = (await modern(client, b, "tasks/get", {"taskId": created["taskId"]}))["result"]
        message = task.get("statusMessage")
        if task["status"] == "working" and message in stages and message not in seen:
            seen.append(message)
        assert task["status"] in ("working", "completed"), task
        return len(seen) >= 2 or task["status"] == "completed"

    await eventually(two_stages_seen, seconds=WAIT, step=0.1)
    assert len(seen) >= 2, f"the upstream's stages, as our task's statusMessage while working: {seen}"
    done = await until(client, b, created["taskId"], "completed", "failed")
    assert done["status"] == "completed" and "Research Report: coral" in done["result"]["content"][0]["text"]


@needs_everything
async def test_a_2025_session_gets_the_upstream_tasks_result_from_the_other_worker(
        fleet: Fleet, client: httpx.AsyncClient) -> None:
    a, b = fleet.servers[:2]
    sid = await open_session(client, a.url, capabilities={"tasks": {}})

    async def legacy(server: LiveServer, id: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
        async with client.stream("POST", server.url, headers=session_headers(sid),
                                 json=request(id, method, params)) as response:
            if response.headers.get("content-type", "").startswith("application/json"):
                return dict(json.loads(await response.aread()))
            async for event in sse_events(response):
                if event.data and "id" in (found := json.loads(event.data)):
                    return dict(found)
        raise AssertionError("no response")

    created = await legacy(a, 1, "tools/call", {"name": RESEARCH, "arguments": {"topic": "kelp"},
                                                "task": {"ttl": 60_000}})
    task = created["result"]["task"]
    assert task["status"] == "working"
    got = await legacy(b, 2, "tasks/get", {"taskId": task["taskId"]})
    assert got["result"]["taskId"] == task["taskId"]
    result = await legacy(b, 3, "tasks/result", {"taskId": task["taskId"]})  # blocks until done
    assert "Research Report: kelp" in result["result"]["content"][0]["text"], result


@needs_everything
async def test_our_tasks_cancel_on_b_cancels_the_upstream_task_run_from_a(
        fleet: Fleet, client: httpx.AsyncClient) -> None:
    a, b = fleet.servers[:2]
    created = (await modern(client, a, "tools/call", {"name": RESEARCH,
                                                      "arguments": {"topic": "moss"}}))["result"]
    assert created["resultType"] == "task", created
    await asyncio.sleep(0.5)
    assert "result" in await modern(client, b, "tasks/cancel", {"taskId": created["taskId"]})
    assert (await until(client, a, created["taskId"], "cancelled"))["status"] == "cancelled"


@needs_everything
async def test_an_upstream_tasks_question_is_answered_through_our_task_on_the_other_worker(
        fleet: Fleet, client: httpx.AsyncClient) -> None:
    """The upstream's task asks (input_required, its elicitation on the tasks/result stream): our
    task parks the question (our replay rule), B's tasks/update answers it, and the answered run
    starts the upstream task again, whose same question finds the answer at once."""
    a, b = fleet.servers[:2]
    created = (await modern(client, a, "tools/call", {
        "name": RESEARCH, "arguments": {"topic": "python", "ambiguous": True}}))["result"]
    assert created["resultType"] == "task", created
    parked = await until(client, b, created["taskId"], "input_required", "completed", "failed")
    assert parked["status"] == "input_required", parked
    [(key, question)] = parked["inputRequests"].items()
    assert question["method"] == "elicitation/create"
    choice = question["params"]["requestedSchema"]["properties"]["interpretation"]["oneOf"][0]["const"]
    ack = await modern(client, b, "tasks/update", {
        "taskId": created["taskId"],
        "inputResponses": {key: {"action": "accept", "content": {"interpretation": choice}}}})
    assert "result" in ack, ack
    done = await until(client, a, created["taskId"], "completed", "failed")
    assert done["status"] == "completed", done
    assert f"Clarification**: {choice}" in done["result"]["content"][0]["text"]
