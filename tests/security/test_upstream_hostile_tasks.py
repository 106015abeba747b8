"""A hostile upstream's tasks (issue 40 item 4, tasks passed through: ``upstreams/tasks.py``): a
task that never ends, polled at the rate it asks for, and a task that is not one. Each ends in a
bounded ``isError`` result naming the upstream: the task is followed no longer than its ttl, its
``pollInterval`` is bounded below (no flood of ``tasks/get``), and the upstream is sent
``tasks/cancel`` for the task we stop following. The upstream is a raw aiohttp server on loopback
speaking just enough Streamable HTTP (2025-11-25, task-augmented ``tools/call``) for ``connect()``.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from aiohttp import web
from django.test import override_settings

from registry.upstreams.config import UpstreamConfig, UpstreamTarget
from registry.upstreams.pool import UpstreamSessions
from registry.upstreams.serve import call_tool
from tests.support.ports import free_port

pytestmark = pytest.mark.timeout(60)
SEEN: Counter[str] = Counter()  # the methods the upstream was sent


def _answer(message: dict[str, Any]) -> dict[str, Any] | None:
    method = message.get("method")
    SEEN[str(method)] += 1
    if method == "initialize":
        return {"protocolVersion": "2025-11-25", "serverInfo": {"name": "hostile", "version": "0"},
                "capabilities": {"tools": {}, "tasks": {"cancel": {}, "requests": {"tools": {"call": {}}}}}}
    if method == "tools/call":
        name = message["params"]["name"]
        if name == "forever":  # 1 ms polls asked for; working, for ever (but a 1.5 s ttl)
            return {"task": {"taskId": "t-forever", "status": "working", "ttl": 1500, "pollInterval": 1,
                             "createdAt": "2026-01-01T00:00:00Z", "lastUpdatedAt": "2026-01-01T00:00:00Z"}}
        if name == "bogus":
            return {"task": {"taskId": 42, "status": "working"}}
        return {"content": [{"type": "text", "text": "fine"}]}
    if method == "tasks/get":
        return {"taskId": message["params"]["taskId"], "status": "working", "pollInterval": 1}
    if method == "tasks/cancel":
        return {"taskId": message["params"]["taskId"], "status": "cancelled"}
    return None


async def _mcp(request: web.Request) -> web.StreamResponse:
    if request.method != "POST":
        return web.Response(status=405)
    message = await request.json()
    if "id" not in message:
        return web.Response(status=202)
    result = _answer(message)
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
    if result is None:
        body["error"] = {"code": -32601, "message": "Method not found"}
    else:
        body["result"] = result
    return web.json_response(body, headers={"Mcp-Session-Id": "hostile-session"})


@pytest.fixture(scope="module")
def hostile() -> Iterator[str]:
    loop = asyncio.new_event_loop()
    port = free_port()
    app = web.Application()
    app.router.add_route("*", "/mcp", _mcp)
    runner = web.AppRunner(app)
    loop.run_until_complete(runner.setup())
    loop.run_until_complete(web.TCPSite(runner, "127.0.0.1", port).start())
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{port}/mcp"
    asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(10)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(5)


class Ctx:
    """A run of one of our tasks, whose caller declared no client capability."""

    progress_token = None
    client_capabilities: dict[str, Any] = {}
    task_run = True

    def __init__(self) -> None:
        self.statuses: list[str] = []

    async def report_task_status(self, message: str) -> None:
        """Our task's status line (``Context.report_task_status`` bounds it): what the upstream said."""
        self.statuses.append(message)


@override_settings(REGISTRY_HTTP_ALLOWED_HOSTS=["127.0.0.1"])
async def test_a_hostile_upstreams_tasks_end_bounded_and_cancelled(hostile: str) -> None:
    config = UpstreamConfig(id=1, name="hostile", prefix="h", url=hostile, transport="streamable-http",
                            auth="none", timeout=2.0, connect_timeout=2.0)
    sessions = UpstreamSessions()
    sessions.open()

    async def call(name: str) -> dict[str, Any]:
        target = UpstreamTarget(config, name, task_support="required")
        return await call_tool(target, {}, Ctx(), sessions)  # type: ignore[arg-type]

    try:
        started = time.perf_counter()
        forever = await call("forever")
        took = time.perf_counter() - started
        assert forever["isError"] is True
        assert forever["content"][0]["text"] == "upstream hostile's task did not finish within 1.5 s"
        assert took < 3.0
        assert SEEN["tasks/get"] <= 16  # 1 ms asked for: polled at most every 0.1 s
        assert SEEN["tasks/cancel"] == 1  # the task we stopped following, cancelled upstream
        bogus = await call("bogus")
        assert bogus["isError"] is True
        assert bogus["content"][0]["text"] == "upstream hostile answered with an invalid task"
    finally:
        await sessions.close()
