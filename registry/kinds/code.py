"""The ``code`` kind: a tool written in Python with ``@registry.code.tool`` (not a database row)."""

from __future__ import annotations

from typing import Any

from mcp_protocol.context import Context
from mcp_protocol.errors import ToolError

from ..code import definitions, serving
from ..serving.specs import ToolSpec


async def execute(spec: ToolSpec, arguments: dict[str, Any], ctx: Context) -> dict[str, Any]:
    if spec.handler not in definitions.TOOLS:
        raise ToolError(f"Tool {spec.name!r} is not available: no code defines it")
    return await serving.call_tool(spec.handler, arguments, ctx)
