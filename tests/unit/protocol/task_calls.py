"""Calls of the tasks extension (2026-07-28, stateless) straight into a ``Server``, and a wait for
a task's end: shared by the in-process task tests (drain, stored outcomes)."""

from __future__ import annotations

import asyncio
from typing import Any

from mcp_protocol.jsonrpc import Request
from mcp_protocol.outbound import NullOutbound
from mcp_protocol.server import Server
from mcp_protocol.tasks.wire import EXTENSION
from tests.support.polling import within

from .conftest import modern_meta

CAPS = {"extensions": {EXTENSION: {}}}


async def rpc(server: Server, method: str, params: dict[str, Any]) -> dict[str, Any]:
    meta = modern_meta(**{"io.modelcontextprotocol/clientCapabilities": CAPS})
    request = Request(1, method, {**params, "_meta": meta})
    response = await server.handle_stateless(request, NullOutbound(), "ann")
    assert response is not None
    return response


async def terminal(server: Server, task_id: str) -> dict[str, Any]:
    """The task once it is completed, failed or cancelled (within 5 s)."""

    async def poll() -> dict[str, Any]:
        while True:
            task: dict[str, Any] = (await rpc(server, "tasks/get", {"taskId": task_id}))["result"]
            if task["status"] in ("completed", "failed", "cancelled"):
                return task
            await asyncio.sleep(0.02)

    return await within(poll(), 5.0)
