"""The ``handler`` kind: call a ``@tool_handler`` registered in code (see ``registry.handlers``)."""

from __future__ import annotations

from typing import Any

from mcp_protocol.context import Context
from mcp_protocol.errors import ToolError

from .. import handlers
from ..serving.results import tool_result
from ..serving.specs import ToolSpec


async def execute(spec: ToolSpec, arguments: dict[str, Any], ctx: Context) -> dict[str, Any]:
    try:
        func = handlers.get("tool", spec.handler)
    except handlers.HandlerNotRegistered:
        raise ToolError(
            f"Tool {spec.name!r} is not available: its handler {spec.handler!r} is not registered"
        ) from None
    return tool_result(await handlers.invoke(func, arguments, ctx))
