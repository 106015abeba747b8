"""A run's outcome is stored exactly once (``tasks/outcome.py``, issue 38 items 1-2), in-process:
one runner alone (its own sweep is the only one, the case that always ran the tool twice) on a
memory task store whose writes fail while ``down`` is set, as Redis' do in an outage (the real
outage, against real Redis and two workers, is ``tests/faults/test_task_faults.py``). A run that
ends while the store is down keeps its result and stores it once the store is back, however long
its lease lapsed meanwhile, and the tool ran once; past ``MAX_UNSTORED`` waiting outcomes one more
is given up, and its task is failed (retryable), never run again.
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
from mcp_protocol.store_errors import StoreUnavailable
from mcp_protocol.stores.memory import MemoryTaskStore
from mcp_protocol.tasks import outcome
from mcp_protocol.tasks.runner import TaskRunner
from tests.support.polling import eventually

from .conftest import make_server
from .task_calls import rpc, terminal

LEASE = 0.6  # s: lapses several times over while the store is down
class OutageStore(MemoryTaskStore):
    """Every write and read fails while ``down`` is set (a Redis outage, seen from a store)."""

    down = False

    def _check(self) -> None:
        if self.down:
            raise StoreUnavailable("down")

    async def finish(self, *args: Any, **kwargs: Any) -> bool:
        self._check()
        return await super().finish(*args, **kwargs)

    async def renew(self, *args: Any, **kwargs: Any) -> set[str]:
        self._check()
        return await super().renew(*args, **kwargs)

    async def lapsed(self, limit: int = 100) -> list[str]:
        self._check()
        return await super().lapsed(limit)


runs: list[str] = []


async def once(args: dict[str, Any], ctx: Any) -> dict[str, Any]:
    runs.append(args["label"])
    await asyncio.sleep(float(args["seconds"]))
    return {"content": [{"type": "text", "text": f"ran {args['label']}"}]}


@pytest.fixture
async def worker() -> AsyncIterator[tuple[Server, OutageStore]]:
    runs.clear()
    tool = Tool("once", {"type": "object"}, execution={"taskSupport": "optional"})
    provider = MemoryProvider(tools=[(tool, once)])
    store = OutageStore()
    server = make_server(provider)
    runner = TaskRunner(store, MemoryBus(), provider, lease=LEASE, immediate=0.01)
    server.attach_tasks(runner)
    await runner.start()
    yield server, store
    store.down = False
    await runner.close()


async def start(server: Server, label: str, seconds: float) -> str:
    params = {"name": "once", "arguments": {"label": label, "seconds": seconds}}
    task_id: str = (await rpc(server, "tools/call", params))["result"]["taskId"]
    return task_id


async def test_a_result_made_while_the_store_is_down_is_stored_once_it_is_back_and_the_tool_ran_once(
    worker: tuple[Server, OutageStore],
) -> None:
    server, store = worker
    task_id = await start(server, "first", 0.1)
    store.down = True
    assert server.tasks is not None
    await eventually(lambda: _ran(server), 5.0)  # the run ended while the store is down
    await asyncio.sleep(LEASE * 3)  # the fault: the store stays down for three leases
    store.down = False
    done = await terminal(server, task_id)
    assert done["status"] == "completed" and done["result"]["content"][0]["text"] == "ran first"
    assert runs == ["first"]


async def test_past_the_bound_an_outcome_is_given_up_and_its_task_failed_never_run_again(
    worker: tuple[Server, OutageStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    server, store = worker
    monkeypatch.setattr("mcp_protocol.tasks.runner.MAX_UNSTORED", 1)
    kept, dropped = await start(server, "kept", 0.1), await start(server, "dropped", 0.3)
    store.down = True
    assert server.tasks is not None
    await eventually(lambda: _runs_over(server), 5.0)
    store.down = False
    assert (await terminal(server, kept))["status"] == "completed"
    given_up = await terminal(server, dropped)
    assert given_up["status"] == "failed" and given_up["error"]["data"] == {"retryable": True}
    assert sorted(runs) == ["dropped", "kept"]
    assert outcome.MAX_UNSTORED == 1_000  # the module's own bound is untouched


async def _ran(server: Server) -> bool:
    assert server.tasks is not None
    return server.tasks.running == 0


async def _runs_over(server: Server) -> bool:
    assert server.tasks is not None
    return server.tasks.running == 0 and len(server.tasks._unstored) == 1

