"""Handlers for the conformance suite's task fixtures (the extension io.modelcontextprotocol/tasks,
SEP-2663; ``fixtures/conformance.json``): what each ``tasks-*`` scenario names, written as any
handler is. Whether a call becomes a task is the server's (``execution.taskSupport`` of the row,
``mcp_protocol/tasks/runner.py``); questions asked in a task become its ``inputRequests``.
"""

from __future__ import annotations

import asyncio
from typing import Any

from mcp_protocol.context import Context
from mcp_protocol.errors import InternalError, ToolError

from ..handlers import tool_handler


def _confirm(message: str, field: str, kind: str) -> dict[str, Any]:
    return {
        "mode": "form",
        "message": message,
        "requestedSchema": {"type": "object", "properties": {field: {"type": kind}}, "required": [field]},
    }


@tool_handler("conformance.greet")
async def greet(arguments: dict[str, Any], ctx: Context) -> str:
    return f"Hello, {arguments.get('name', 'World')}!"


@tool_handler("conformance.slow_compute")
async def slow_compute(arguments: dict[str, Any], ctx: Context) -> str:
    """Sleeps ``seconds`` then answers; a cancel stops the sleep (the task stays ``cancelled``)."""
    seconds = float(arguments.get("seconds", 1))
    await asyncio.sleep(seconds)
    return f"Computed {arguments.get('label', 'result')} after {seconds:g} s"


@tool_handler("conformance.failing_job")
async def failing_job(arguments: dict[str, Any], ctx: Context) -> str:
    await asyncio.sleep(1.0)
    raise ToolError("The job failed: the input could not be processed")


@tool_handler("conformance.protocol_error_job")
async def protocol_error_job(arguments: dict[str, Any], ctx: Context) -> str:
    await asyncio.sleep(0.5)
    raise InternalError("The job hit an internal error")


@tool_handler("conformance.confirm_delete")
async def confirm_delete(arguments: dict[str, Any], ctx: Context) -> str:
    await ctx.run_as_task()  # the question belongs to the task, not to an MRTR round
    filename = arguments.get("filename", "")
    answer = await ctx.elicit(_confirm(f"Delete {filename}?", "confirm", "boolean"), key="confirm")
    content = answer.get("content") or {}
    if answer.get("action") == "accept" and content.get("confirm"):
        return f"Deleted {filename}"
    return f"Kept {filename}"


@tool_handler("conformance.multi_input")
async def multi_input(arguments: dict[str, Any], ctx: Context) -> str:
    await ctx.run_as_task()
    name, confirm = await asyncio.gather(
        ctx.elicit(_confirm("Your name?", "name", "string"), key="name"),
        ctx.elicit(_confirm("Proceed?", "confirm", "boolean"), key="confirm"),
    )
    given, sure = (name.get("content") or {}).get("name"), (confirm.get("content") or {}).get("confirm")
    return f"Got {given} and {sure}"


@tool_handler("conformance.tool_with_task")
async def tool_with_task(arguments: dict[str, Any], ctx: Context) -> str:
    """MRTR first (in the request), then the task (SEP-2663 "Composition with MRTR")."""
    answer = await ctx.elicit(_confirm("What is your name?", "name", "string"), key="user_name")
    await ctx.run_as_task()
    await asyncio.sleep(0.5)
    return f"Hello, {(answer.get('content') or {}).get('name')}! Your task is done."
