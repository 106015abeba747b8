"""Tasks lose nothing when their parts fail (issue 38 items 1-3), against real processes: two
uvicorn workers on PostgreSQL and a private Redis that keeps every write across a restart (AOF,
``appendfsync always``), with a task lease of ``LEASE`` seconds.

- Redis stops while a task of ``slow_once`` (``slow_compute`` without ``idempotentHint``) runs,
  for longer than the run and the lease: the run ends while nothing can be stored and its lease
  lapses. When Redis is back the task is ``completed`` with that run's result, and the tool ran
  once (the workers' ``mcp_tasks_finished_total`` counts one completed run and no failed one):
  neither its own worker's sweep nor the other's took the lapsed lease for a dead owner's.
- A worker told to stop (SIGTERM) with a ``slow_once`` task that needs less than the grace
  finishes it: the task is ``completed`` with its result, and the worker then exits.

Skipped without PostgreSQL on 127.0.0.1:5432 or without redis-server.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest

from tests.support import REGISTRY_PROVIDER, LiveServer
from tests.support.fleets import Fleet, running_fleet
from tests.support.mcp_http import modern_headers, modern_message
from tests.support.polling import eventually, within
from tests.support.postgres import temporary_database
from tests.support.private_redis import PERSISTENT, have_redis_server

pytestmark = [
    pytest.mark.timeout(180),
    pytest.mark.skipif(not have_redis_server(), reason="needs redis-server and redis-cli"),
]
LEASE = 1.5  # s
GRACE = 6.0  # s: MCP_SHUTDOWN_GRACE_SECONDS of the worker stopped with SIGTERM
WAIT = 20.0  # s: the deadline of every wait
TASKS = {"extensions": {"io.modelcontextprotocol/tasks": {}}}
SLOW_ONCE = (
    "from registry.models import Tool; Tool.objects.update_or_create(name='slow_once', defaults=dict("
    "kind='handler', handler='conformance.slow_compute', task_support='optional', description='d', "
    "input_schema={'type': 'object', 'properties': {'seconds': {'type': 'number'}}}))"
)
FINISHED = re.compile(r'^mcp_tasks_finished_total\{status="(\w+)"\} ([\d.]+)$', re.MULTILINE)


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fleet]:
    with temporary_database("mcpsite_task_faults") as url:
        options = {"provider": REGISTRY_PROVIDER, "database_url": url, "redis_args": PERSISTENT}
        with running_fleet(tmp_path_factory.mktemp("redis"), **options) as fleet:
            fleet.migrate()
            fleet.manage("load_conformance")
            fleet.manage("shell", "-c", SLOW_ONCE)
            fleet.start(2, MCP_TASK_LEASE_SECONDS=str(LEASE))
            yield fleet


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=WAIT) as c:
        yield c


async def modern(
    client: httpx.AsyncClient, server: LiveServer, method: str, params: dict[str, Any]
) -> httpx.Response:
    message = modern_message(1, method, params, TASKS)
    return await client.post(server.url, headers=modern_headers(message), json=message)


async def slow_once(client: httpx.AsyncClient, server: LiveServer, seconds: float) -> str:
    """A task of ``slow_once`` made on ``server``: its id."""
    params = {"name": "slow_once", "arguments": {"seconds": seconds}}
    created = (await modern(client, server, "tools/call", params)).json()["result"]
    assert created["resultType"] == "task", created
    task_id: str = created["taskId"]
    return task_id


async def until_terminal(client: httpx.AsyncClient, server: LiveServer, task_id: str) -> dict[str, Any]:
    """The task once terminal, polled on ``server`` (a 503 while Redis comes back is polled again)."""
    found: dict[str, Any] = {}

    async def terminal() -> bool:
        response = await modern(client, server, "tasks/get", {"taskId": task_id})
        if response.status_code == 503:
            return False
        found.update(response.json()["result"])
        return found["status"] in ("completed", "failed", "cancelled")

    await eventually(terminal, WAIT, step=0.1)
    return found


async def finished_runs(client: httpx.AsyncClient, *servers: LiveServer) -> dict[str, float]:
    """``mcp_tasks_finished_total`` by status, summed over the workers."""
    counts: dict[str, float] = {}
    for server in servers:
        for status, value in FINISHED.findall((await client.get(server.base_url + "/metrics")).text):
            counts[status] = counts.get(status, 0.0) + float(value)
    return counts


async def test_a_task_that_finishes_while_redis_is_down_runs_once_and_its_result_is_kept(
    fleet: Fleet, client: httpx.AsyncClient
) -> None:
    a, b = fleet.servers[:2]
    before = await finished_runs(client, a, b)
    task_id = await slow_once(client, a, 1)
    fleet.redis.stop()
    try:
        # The fault: Redis away for longer than the run (1 s) and the lease. The run ends in the
        # outage (A says so), then its lease lapses while nobody can renew anything.
        await eventually(lambda: _said(a, f"Task {task_id}: the task store is unavailable"), WAIT, step=0.05)
        await asyncio.sleep(LEASE * 2)
    finally:
        fleet.redis.start()
    done = await until_terminal(client, b, task_id)
    assert done["status"] == "completed", done
    assert done["result"]["content"][0]["text"] == "Computed result after 1 s"
    after = await finished_runs(client, a, b)
    ran = {status: after.get(status, 0.0) - before.get(status, 0.0) for status in after}
    assert ran.get("completed") == 1.0 and not ran.get("failed"), ran  # one run, never a second


async def _said(server: LiveServer, text: str) -> bool:
    return text in server.log_text()


async def test_sigterm_lets_a_task_with_time_left_in_the_grace_complete(
    fleet: Fleet, client: httpx.AsyncClient
) -> None:
    b = fleet.servers[1]
    c = fleet.worker(MCP_TASK_LEASE_SECONDS=str(LEASE), MCP_SHUTDOWN_GRACE_SECONDS=str(GRACE))
    task_id = await slow_once(client, c, 3)
    assert c.process is not None
    os.killpg(c.process.pid, signal.SIGTERM)
    done = await until_terminal(client, b, task_id)
    assert done["status"] == "completed", done  # not failed: it had 3 s left of a 6 s grace
    assert done["result"]["content"][0]["text"] == "Computed result after 3 s"
    process = c.process
    await within(asyncio.to_thread(process.wait), GRACE + 5)  # then the worker exits
