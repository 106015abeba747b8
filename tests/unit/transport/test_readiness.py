"""``transports/readiness.py``: the runtime starts at ASGI lifespan startup, a failed start keeps
retrying in the background (not ready meanwhile), and ``ready()`` says started and subscribed."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from mcp_protocol.memory_provider import MemoryProvider
from mcp_protocol.routing import lifespan
from mcp_protocol.transports import readiness, runtime

FAILURES = {"left": 0}


class FlakyProvider(MemoryProvider):
    """Its first refreshes fail, as a registry whose database is not up yet."""

    async def refresh(self) -> None:
        if FAILURES["left"] > 0:
            FAILURES["left"] -= 1
            raise ConnectionError("database not up yet")
        await super().refresh()


MEMORY = {
    "PROVIDER": {"BACKEND": f"{__name__}.FlakyProvider", "OPTIONS": {}},
    "SESSION_STORE": {"BACKEND": "mcp_protocol.stores.memory.MemorySessionStore", "OPTIONS": {}},
    "EVENT_STORE": {"BACKEND": "mcp_protocol.stores.memory.MemoryEventStore", "OPTIONS": {}},
    "BUS": {"BACKEND": "mcp_protocol.bus.memory.MemoryBus", "OPTIONS": {}},
}


@pytest.fixture
async def memory_runtime(settings: Any) -> AsyncIterator[None]:
    settings.MCP = MEMORY
    yield
    await runtime.shutdown()
    FAILURES["left"] = 0


async def run_lifespan_startup() -> asyncio.Task[None]:
    """Send ``lifespan.startup`` as uvicorn does; returns the lifespan task (still running)."""
    inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    await inbox.put({"type": "lifespan.startup"})
    complete = asyncio.Event()

    async def send(message: dict[str, Any]) -> None:
        assert message == {"type": "lifespan.startup.complete"}
        complete.set()

    task = asyncio.ensure_future(lifespan({"type": "lifespan"}, inbox.get, send))
    await asyncio.wait_for(complete.wait(), 5)
    return task


async def test_lifespan_startup_starts_the_runtime_and_subscribes_before_any_request(
    memory_runtime: None,
) -> None:
    assert not readiness.ready()
    task = await run_lifespan_startup()
    assert readiness.ready()
    rt = runtime.current()
    assert rt is not None and rt.fanout.listening
    task.cancel()


async def test_a_start_that_fails_is_not_ready_and_retries_by_itself(memory_runtime: None) -> None:
    FAILURES["left"] = 3
    await readiness.startup()  # does not raise: the process keeps running, not ready
    assert not readiness.ready()
    deadline = asyncio.get_running_loop().time() + 10
    while not readiness.ready():  # retries back off by time: nothing to wait on but the clock
        assert asyncio.get_running_loop().time() < deadline, "not ready 10 s after the failures ended"
        await asyncio.sleep(0.05)
    assert FAILURES["left"] == 0
