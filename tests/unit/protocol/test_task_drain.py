"""A stopping worker's tasks (``tasks/drain.py``, issue 38 item 3), in-process: two runners on one
memory task store and bus stand for two workers, with a lease (30 s) far longer than the test, so
nothing here is a sweep's doing. A's drain lets a run that fits its grace finish; at the end of
the grace its idempotent task is handed over and B runs it at once, and its other task ends
``failed`` with the retryable "worker stopped" error instead of waiting for its lease to lapse.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from mcp_protocol.bus.memory import MemoryBus
from mcp_protocol.definitions import Tool
from mcp_protocol.memory_provider import MemoryProvider
from mcp_protocol.server import Server
from mcp_protocol.stores.memory import MemoryTaskStore
from mcp_protocol.tasks.runner import TaskRunner
from tests.support.polling import within

from .conftest import make_server
from .task_calls import rpc, terminal

LEASE = 30.0  # s: never lapses during a test
async def slow(args: dict[str, Any], ctx: Any) -> dict[str, Any]:
    await asyncio.sleep(float(args["seconds"]))
    return {"content": [{"type": "text", "text": f"done after {args['seconds']}"}]}


def tool(name: str, **annotations: Any) -> Tool:
    return Tool(name, {"type": "object"}, execution={"taskSupport": "optional"}, annotations=annotations)


@pytest.fixture
async def workers() -> AsyncIterator[tuple[Server, Server]]:
    provider = MemoryProvider(tools=[(tool("idem", idempotentHint=True), slow), (tool("once"), slow)])
    store, bus = MemoryTaskStore(), MemoryBus()
    servers, runners = [], []
    for _ in range(2):
        server = make_server(provider)
        runner = TaskRunner(store, bus, provider, lease=LEASE, immediate=0.01)
        server.attach_tasks(runner)
        await runner.start()
        servers.append(server)
        runners.append(runner)
    yield servers[0], servers[1]
    for runner in runners:
        await runner.close()


async def task_of(server: Server, name: str, seconds: float) -> str:
    result = (await rpc(server, "tools/call", {"name": name, "arguments": {"seconds": seconds}}))["result"]
    assert result["resultType"] == "task"
    task_id: str = result["taskId"]
    return task_id


async def test_a_run_that_fits_the_grace_finishes_on_the_stopping_worker(
    workers: tuple[Server, Server],
) -> None:
    a, b = workers
    task_id = await task_of(a, "once", 0.3)
    assert a.tasks is not None
    await within(a.tasks.close(grace=3.0), 5.0)  # returns once the run ended and was stored
    done = await terminal(b, task_id)
    assert done["status"] == "completed" and done["result"]["content"][0]["text"] == "done after 0.3"


async def test_past_the_grace_an_idempotent_task_is_handed_over_at_once_and_another_ends_failed(
    workers: tuple[Server, Server],
) -> None:
    a, b = workers
    handed, failed = await task_of(a, "idem", 1.0), await task_of(a, "once", 60)
    assert a.tasks is not None
    await within(a.tasks.close(grace=0.2), 5.0)
    stopped = await terminal(b, failed)
    assert stopped["status"] == "failed" and stopped["error"]["data"] == {"retryable": True}
    done = await terminal(b, handed)  # run afresh on B, long before a 30 s lease would lapse
    assert done["status"] == "completed" and done["result"]["content"][0]["text"] == "done after 1.0"
