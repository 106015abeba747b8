"""The ``upstream`` kind: a tool, resource, template or prompt mirrored from another MCP server,
served by asking that server (issue 40 item 4). Here rather than in ``registry/kinds/``: this
package reads the http kind's settings (``guard.py``), so a kind importing it would be a cycle.

Every call goes over the worker's pooled session with the upstream (``upstreams/pool.py``) through
``upstreams/calls.run`` (breaker, concurrency cap, deadline, CLIENT span), under the upstream's
own name: ``UpstreamTarget.name`` (the original tool or prompt name, resource URI or URI
template; ours is ``<prefix>_<name>``).

- ``tools/call``: the upstream's ``CallToolResult`` (content, structuredContent, isError, _meta)
  is ours. A failure (unreachable, timeout, circuit open, a JSON-RPC error) is an ``isError``
  result naming the upstream and its message (server/tools.mdx "Error Handling": a tool's
  execution error is reported in the result, so the model can see it).
- ``resources/read``, ``prompts/get``, ``completion/complete``: the upstream's result; a failure is
  a JSON-RPC error: the upstream's own code when it answered with one (-32002 "resource not found"
  stays that), else -32603 with the upstream's message.
- A tool the upstream runs as a task (its ``execution.taskSupport``, where it declared tasks) is
  sent as one when our call runs as our task, or when the upstream requires it (``tasks.py``).
- What the upstream says during a call reaches our client (``relay.py``): progress (when our
  client sent a progressToken), log messages, its elicitation, sampling and roots requests (when
  our client declared the capability); our client's cancellation reaches the upstream
  (``wire.py``).
- An upstream called as the user (``config.per_user``) goes through ``acting.run_as_user``: the
  caller's token and session; completion then suggests nothing (no caller to act for).
- Results are bounded (``wire.MAX_RESULT_BYTES``, checked on the bytes as they arrive) and
  checked for the members our core relies on (a hostile upstream's answer is not relayed as is);
  the checks are shallow on purpose: the hot path does not re-validate a whole result.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcp_protocol.context import Context
from mcp_protocol.definitions import Completion
from mcp_protocol.errors import MCPError

from .acting import run_as_user
from .calls import UpstreamFailure, run
from .config import UpstreamTarget
from .pool import UpstreamSessions
from .relay import Relay
from .tasks import call_as_task

INTERNAL_ERROR = -32603
SERVER_INFO = "io.modelcontextprotocol/serverInfo"  # 2026-07-28: the answering server, on each result


def _ours(result: dict[str, Any], upstream: str, members: Mapping[str, type]) -> dict[str, Any]:
    """The upstream's result as ours: the members we rely on of the right JSON type, its 2026-07-28
    envelope removed (our core gives the result the shape of our client's revision; the upstream's
    serverInfo is not our client's business)."""
    for member, kind in members.items():
        if not isinstance(result.get(member), kind):
            raise UpstreamFailure(f"upstream {upstream} answered with an invalid result")
    result.pop("resultType", None)
    meta = result.get("_meta")
    if isinstance(meta, dict):
        meta.pop(SERVER_INFO, None)
        if not meta:
            del result["_meta"]
    return result


def _content_ok(blocks: list[Any]) -> bool:
    return all(isinstance(b, dict) and isinstance(b.get("type"), str) for b in blocks)


async def call_tool(target: UpstreamTarget, arguments: dict[str, Any], ctx: Context,
                    sessions: UpstreamSessions) -> dict[str, Any]:
    upstream = target.config.name
    params = {"name": target.name, "arguments": arguments}
    try:
        if target.config.per_user:
            # The caller's own session and token (acting.py). A task is not passed through on a
            # per-user session (its polling would outlive the request's credential): our durable
            # task wraps the call, and an upstream that requires task-augmented calls refuses it.
            result = await run_as_user(sessions, target.config, "tools/call", target.name, params, ctx,
                                       ask=True)
        elif target.task_support == "required" or (target.task_support == "optional" and ctx.task_run):
            result = await call_as_task(sessions, target.config, target.name, arguments, Relay(ctx),
                                        ctx.report_task_status)
        else:
            result = await run(sessions, target.config, "tools/call", target.name, params, Relay(ctx))
        result = _ours(result, upstream, {"content": list})
        if not _content_ok(result["content"]) or not isinstance(result.get("isError", False), bool) or (
                not isinstance(result.get("structuredContent", {}), dict)):
            raise UpstreamFailure(f"upstream {upstream} answered with an invalid result")
        return result
    except UpstreamFailure as exc:
        return {"content": [{"type": "text", "text": exc.message}], "isError": True}


async def read_resource(target: UpstreamTarget, uri: str, sessions: UpstreamSessions,
                        ctx: Context | None = None) -> list[dict[str, Any]]:
    """``uri``: the URI asked for (a mirrored resource's own, or one a mirrored template serves);
    the upstream's URIs are not renamed, only its names are."""
    upstream = target.config.name

    async def call() -> list[dict[str, Any]]:
        if target.config.per_user:
            if ctx is None:
                raise UpstreamFailure(f"upstream {upstream} is called as the user, and nobody is calling")
            result = await run_as_user(sessions, target.config, "resources/read", uri, {"uri": uri}, ctx,
                                       ask=False)
        else:
            result = await run(sessions, target.config, "resources/read", uri, {"uri": uri}, Relay(ctx))
        contents = _ours(result, upstream, {"contents": list})["contents"]
        if not all(isinstance(c, dict) and isinstance(c.get("uri"), str) for c in contents):
            raise UpstreamFailure(f"upstream {upstream} answered with an invalid result")
        return list(contents)

    return list(await _protocol(call()))


async def get_prompt(target: UpstreamTarget, arguments: Mapping[str, str], ctx: Context,
                     sessions: UpstreamSessions) -> dict[str, Any]:
    upstream = target.config.name

    async def call() -> dict[str, Any]:
        params = {"name": target.name, "arguments": dict(arguments)}
        if target.config.per_user:
            result = await run_as_user(sessions, target.config, "prompts/get", target.name, params, ctx,
                                       ask=False)
        else:
            result = await run(sessions, target.config, "prompts/get", target.name, params, Relay(ctx))
        result = _ours(result, upstream, {"messages": list})
        if not all(isinstance(m, dict) and isinstance(m.get("content"), dict) for m in result["messages"]):
            raise UpstreamFailure(f"upstream {upstream} answered with an invalid result")
        return result

    return dict(await _protocol(call()))


async def complete(target: UpstreamTarget, ref_type: str, argument_name: str, value: str,
                   context_arguments: Mapping[str, str], sessions: UpstreamSessions) -> Completion:
    """``ref_type``: ``ref/prompt`` (sent with the upstream's prompt name) or ``ref/resource``
    (with its URI template)."""
    upstream = target.config.name
    if target.config.per_user:
        # A completion request carries no context to act for a user with (it is asked while the
        # user types): nothing is suggested rather than asking the upstream as nobody.
        return Completion()
    ref = {"type": "ref/prompt", "name": target.name} if ref_type == "ref/prompt" else {
        "type": "ref/resource", "uri": target.name}
    params: dict[str, Any] = {"ref": ref, "argument": {"name": argument_name, "value": value}}
    if context_arguments:
        params["context"] = {"arguments": dict(context_arguments)}

    async def call() -> Completion:
        result = await run(sessions, target.config, "completion/complete", target.name, params, Relay(None))
        found = _ours(result, upstream, {"completion": dict})["completion"]
        values = found.get("values")
        total, more = found.get("total"), found.get("hasMore")
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values) or not (
                total is None or isinstance(total, int)):
            raise UpstreamFailure(f"upstream {upstream} answered with an invalid result")
        return Completion(values=tuple(values[:100]), total=total, has_more=bool(more))

    completion: Completion = await _protocol(call())
    return completion


async def _protocol(call: Any) -> Any:
    """The upstream's failure as a JSON-RPC error of ours: its code when it answered with one."""
    try:
        return await call
    except UpstreamFailure as exc:
        raise MCPError(exc.message, code=exc.code or INTERNAL_ERROR) from None
