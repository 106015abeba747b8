"""Tool kinds: what a tool row does when called, chosen among the kinds the code defines.

Each kind is an async executor ``(spec, arguments, ctx) -> CallToolResult dict``; it may raise
``ToolError``. The ``http`` kind is also handed the provider's ``UpstreamClients`` (its pooled
clients live as long as the runtime of their loop, not in a module global). The provider picks
the executor by ``ToolSpec.kind``; an unknown kind (a row written by a newer release) is a tool
error, not a crash.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from mcp_protocol.context import Context
from mcp_protocol.errors import ToolError

from ..serving.specs import ToolSpec
from . import code, handler, http, template
from .http_client.clients import UpstreamClients

Executor = Callable[[ToolSpec, dict[str, Any], Context], Awaitable[dict[str, Any]]]

EXECUTORS: dict[str, Executor] = {
    "code": code.execute,
    "handler": handler.execute,
    "template": template.execute,
}


async def execute(
    spec: ToolSpec, arguments: dict[str, Any], ctx: Context, clients: UpstreamClients
) -> dict[str, Any]:
    if spec.kind == "http":
        return await http.execute(spec, arguments, ctx, clients)
    executor = EXECUTORS.get(spec.kind)
    if executor is None:
        raise ToolError(f"Tool {spec.name!r} has kind {spec.kind!r}, which this server does not implement")
    return await executor(spec, arguments, ctx)
