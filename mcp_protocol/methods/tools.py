"""``tools/list`` and ``tools/call`` (server/tools.mdx).

Decisions, with their spec basis:

- Unknown tool → -32602 "Unknown tool" (the spec's own example; protocol error in every revision).
- ``arguments`` omitted → ``{}``; present but not an object → -32602 (a malformed request).
- Arguments failing ``inputSchema``: from 2025-11-25 an ``isError: true`` result (SEP-1303, so the
  model can correct itself), before that -32602 ("Invalid arguments" is listed under protocol
  errors in 2025-06-18).
- ``ToolError`` from the provider → ``isError: true`` result with its content.
- ``structuredContent`` not conforming to ``outputSchema`` ("Servers MUST provide structured
  results that conform to this schema"): an ``isError: true`` result that says what did not match,
  as the official SDKs answer it (python-sdk's lowlevel server "Output validation error: ...");
  the mismatch is logged too. A JSON-RPC -32603 would tell the model nothing it can act on and
  hide a reply the tool did produce. ``isError`` results are not checked (they need not carry
  structured content). In 2025-06-18 and 2025-11-25 ``structuredContent`` must also be a JSON
  object (their schema), so any other value (possible with a 2026-era ``outputSchema``) is the
  same ``isError`` result, without it; on an ``isError`` result it is dropped, so the tool error
  still reaches the model. An ``outputSchema`` that cannot be used at all is -32603 (the server's
  own definition is broken).
- Before 2025-06-18 ``structuredContent`` does not exist: it is removed, and when the tool gave no
  content at all its JSON is sent as a text block (the spec's backwards-compatibility SHOULD).
- A ``ClientRequestError`` the tool let escape (sampling/elicitation refused or timed out) → an
  ``isError`` result with its message.
- Tasks (``execution.taskSupport``: forbidden, optional, required). 2026-07-28, extension
  ``io.modelcontextprotocol/tasks`` (SEP-2663): a client declaring it (per request) may get a
  ``CreateTaskResult`` for an optional or required tool (the server decides: ``tasks/runner.py``);
  a required tool called without it → -32021 naming the extension; ``params.task`` is ignored
  ("servers MUST ignore it"). 2025-11-25 (basic/utilities/tasks.mdx): ``params.task`` asks for a
  task: -32601 for a forbidden tool or without a task runner, as is a plain call of a required
  tool; before 2025-11-25 there are no tasks (``params.task`` → -32601). A caller at its cap of
  unfinished tasks (``TaskStore.max_open_per_principal``) → -32000 with ``data.limit``.
- Approval (``approvals.py``): the tool's policy is applied in ``execute_tool``, before the tool
  runs and wherever it runs (in the request, or in a task's run), so a confirmation or a staff
  wait is part of the run: a task's input request, a 2026-07-28 input-required round.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from .. import validation, versions
from ..approvals import Approvals, gate
from ..context import Context
from ..definitions import Tool
from ..errors import ClientRequestError, InternalError, InvalidParams, MCPError, MethodNotFound, ToolError
from ..inputs import questions
from ..pagination import OTHER_LIST
from ..provider import Provider
from ..store_errors import TaskLimitReached
from ..tasks.wire import created_to_wire, declares_extension, missing_extension
from . import list_filter, tool_search
from .base import Call, require_str
from .listing import list_page

logger = logging.getLogger(__name__)
TOO_MANY_TASKS = -32000


async def list_tools(call: Call) -> dict[str, Any]:
    search = tool_search.active(call)
    # Search mode (tool_search.py): the meta-tools and the pinned tools, a list of its own.
    items = call.snapshot.tools if search is None else tool_search.listed(call.snapshot, search)
    kind = "tools" if search is None else "tools:search"
    if not call.server.list_filter:
        return list_page(call, kind, "tools", items, _tool_key, versions.tool_to_wire)
    # SEP-2564's filter (list_filter.py), on when the deployment opts in.
    names = list_filter.patterns(call.params)
    if names:
        items = tuple(tool for tool in items if list_filter.matches(names, tool.name))
    try:
        return list_page(call, list_filter.kind(kind, names), "tools", items, _tool_key,
                         versions.tool_to_wire)
    except InvalidParams as exc:
        if exc.message == OTHER_LIST:
            raise InvalidParams(list_filter.CHANGED) from None
        raise


def _tool_key(tool: Tool) -> str:
    return tool.name


def _error_result(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": True}


async def call_tool(call: Call) -> dict[str, Any]:
    params = call.params
    name = require_str(params, "name")
    tool = tool_search.meta_tool(call, name) or call.tool(name)
    if tool is None:
        raise InvalidParams(f"Unknown tool: {name}", {"name": name})
    as_task, ttl_ms = _as_task(call, tool)
    arguments = params.get("arguments")
    if arguments is None:
        arguments = {}
    elif not isinstance(arguments, dict):
        raise InvalidParams("params.arguments must be an object")

    try:
        problems = validation.errors(tool.input_schema, arguments)
    except validation.InvalidSchema:
        logger.exception("Tool %r has an invalid inputSchema", name)
        raise InternalError() from None
    if problems:
        message = f"Invalid arguments for tool {name}: " + "; ".join(problems)
        if versions.input_validation_is_tool_error(call.version):
            return _error_result(message)
        raise InvalidParams(message, {"errors": problems})
    if tool_search.is_meta(tool):
        return _shape_result(tool, tool_search.run_meta(call, tool, arguments), call.version)

    runner = call.server.tasks
    if as_task and runner is not None:
        try:
            started = await runner.start_call(
                tool, arguments, call.session, call.ctx.inputs, call.version, wait=call.modern, ttl_ms=ttl_ms
            )
        except TaskLimitReached as exc:
            # A capacity limit of this server (no code in the spec): JSON-RPC's server-error range,
            # as for the cap on live sessions.
            raise MCPError(
                f"Too many unfinished tasks for this caller (limit {exc.limit}): wait for some to "
                "finish or cancel them",
                {"limit": exc.limit},
                code=TOO_MANY_TASKS,
            ) from None
        if started.record is not None:
            return created_to_wire(started.record, modern=call.modern)
        if started.asked is not None:
            return questions(started.asked, call.server.request_state)
        assert started.result is not None
        return started.result
    return await execute_tool(
        call.server.provider, tool, arguments, call.ctx, call.version, approvals=call.server.approvals
    )


def _as_task(call: Call, tool: Tool) -> tuple[bool, int | None]:
    """Whether this call runs as a task, and the ttl the client asked for (2025-11-25)."""
    support = (tool.execution or {}).get("taskSupport", "forbidden")
    can = call.server.tasks is not None and support in ("optional", "required")
    if call.modern:
        declared = declares_extension(call.session.client_capabilities)
        if support == "required" and not (declared and can):
            raise missing_extension(f"the tool {tool.name}")
        return declared and can, None
    task = call.params.get("task")
    if task is None:
        if call.version == versions.V2025_11_25 and support == "required":
            # 2025-11-25 tools.mdx: a tool that requires a task, called without one → MUST -32601.
            raise MethodNotFound(f"Tool {tool.name} can only be called as a task")
        return False, None
    if call.version != versions.V2025_11_25 or not can:
        raise MethodNotFound(f"Tool {tool.name} cannot be called as a task")
    if not isinstance(task, dict):
        raise InvalidParams("params.task must be an object")
    ttl = task.get("ttl")
    if ttl is not None and (not isinstance(ttl, int) or isinstance(ttl, bool) or ttl <= 0):
        raise InvalidParams("params.task.ttl must be a positive integer (milliseconds)")
    return True, ttl


async def execute_tool(
    provider: Provider,
    tool: Tool,
    arguments: dict[str, Any],
    ctx: Context,
    version: str,
    *,
    approvals: Approvals | None = None,
) -> dict[str, Any]:
    """Run the tool and shape its result: what a call answers, or a task's ``result``. A tool
    whose policy asks for approval runs only once approved (``approvals.gate``)."""
    if tool.approval != "none":
        refused = await gate(tool, arguments, ctx, approvals)
        if refused is not None:
            return refused
    try:
        raw = await provider.call_tool(tool, arguments, ctx)
    except ToolError as exc:
        return {"content": versions.contents_to_wire(exc.content, version), "isError": True}
    except ClientRequestError as exc:
        # The tool needed the client (sampling, elicitation, roots) and did not get an answer:
        # a tool execution failure the model can see, not a protocol error.
        return _error_result(exc.message)
    return _shape_result(tool, raw, version)


def _json_type(value: Any) -> str:
    names = {list: "an array", str: "a string", bool: "a boolean", int: "a number", float: "a number"}
    return "null" if value is None else names.get(type(value), type(value).__name__)


def _output_mismatch(tool: Tool, why: str) -> dict[str, Any]:
    """The tool's reply broke its own ``outputSchema``: said to the model as a tool error."""
    return _error_result(f"Tool {tool.name!r} returned a result that does not match its outputSchema: {why}")


def _shape_result(tool: Tool, raw: dict[str, Any], version: str) -> dict[str, Any]:
    result = dict(raw)
    is_error = bool(result.get("isError"))
    structured = result.get("structuredContent")
    if (
        "structuredContent" in result
        and versions.structured_content_is_object(version)
        and not isinstance(structured, dict)
    ):
        # [06][11] schema.ts: structuredContent is an object (outputSchema is type "object"); a
        # 2026-era outputSchema may describe an array or a scalar, which these clients cannot take.
        logger.error(
            "Tool %r returned a non-object structuredContent (%s), invalid in %s",
            tool.name,
            type(structured).__name__,
            version,
        )
        if not is_error:
            return _output_mismatch(tool, f"structuredContent is {_json_type(structured)}, not an object")
        del result["structuredContent"]  # keep the tool error itself visible to the model
    if tool.output_schema is not None and not is_error and versions.has_structured_output(version):
        if "structuredContent" not in result:
            logger.error("Tool %r declares an outputSchema but returned no structuredContent", tool.name)
            return _output_mismatch(tool, "it returned no structuredContent")
        try:
            problems = validation.errors(tool.output_schema, structured)
        except validation.InvalidSchema:
            logger.exception("Tool %r has an invalid outputSchema", tool.name)
            raise InternalError() from None
        if problems:
            logger.error(
                "Tool %r returned structuredContent not matching its outputSchema: %s", tool.name, problems
            )
            return _output_mismatch(tool, "; ".join(problems))
    content = result.get("content")
    if not versions.has_structured_output(version) and "structuredContent" in result:
        del result["structuredContent"]
        if not content:
            content = [{"type": "text", "text": json.dumps(structured, ensure_ascii=False)}]
    result["content"] = versions.contents_to_wire(content, version)
    if not is_error:
        result.pop("isError", None)
    return result
