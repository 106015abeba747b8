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
- Progress: when our client sent a progressToken, the upstream request carries one too (the SDK's
  ``progress_callback``) and each notification it sends becomes ours (``ctx.report_progress``:
  increasing values only, dropped after the response, basic/utilities/progress.mdx).
- Cancellation: our client's ``notifications/cancelled`` cancels the task of the call; the SDK,
  its request cancelled, sends ``notifications/cancelled`` for it to the upstream
  (basic/utilities/cancellation.mdx).
- Results are bounded: a serialized result over ``MAX_RESULT_BYTES`` is refused (a hostile
  upstream's answer is not relayed unbounded to our clients).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from mcp import types as sdk
from mcp.client.session import ClientSession

from mcp_protocol.context import Context
from mcp_protocol.definitions import Completion
from mcp_protocol.errors import MCPError

from .calls import MAX_RESULT_BYTES, UpstreamFailure, run
from .config import UpstreamTarget
from .pool import UpstreamSessions

INTERNAL_ERROR = -32603
SERVER_INFO = "io.modelcontextprotocol/serverInfo"  # 2026-07-28: the answering server, on each result


def _wire(result: Any, upstream: str) -> dict[str, Any]:
    wire: dict[str, Any] = result.model_dump(by_alias=True, mode="json", exclude_none=True)
    # The result is ours now: our core gives it the shape of our client's revision (resultType is
    # 2026-07-28's), and the upstream's serverInfo is not our client's business.
    wire.pop("resultType", None)
    meta = wire.get("_meta")
    if isinstance(meta, dict):
        meta.pop(SERVER_INFO, None)
        if not meta:
            del wire["_meta"]
    if len(json.dumps(wire, separators=(",", ":"))) > MAX_RESULT_BYTES:
        raise UpstreamFailure(f"upstream {upstream} answered with more than {MAX_RESULT_BYTES} bytes")
    return wire


def _relay(ctx: Context | None) -> Any:
    if ctx is None or ctx.progress_token is None:
        return None

    async def progress(progress: float, total: float | None, message: str | None) -> None:
        await ctx.report_progress(progress, total, message)

    return progress


async def call_tool(target: UpstreamTarget, arguments: dict[str, Any], ctx: Context,
                    sessions: UpstreamSessions) -> dict[str, Any]:
    upstream = target.config.name

    async def operation(session: ClientSession) -> dict[str, Any]:
        request = sdk.CallToolRequest(params=sdk.CallToolRequestParams(name=target.name, arguments=arguments))
        result = await session.send_request(request, sdk.CallToolResult, progress_callback=_relay(ctx))
        return _wire(result, upstream)

    try:
        return dict(await run(sessions, target.config, "tools/call", target.name, operation))
    except UpstreamFailure as exc:
        return {"content": [{"type": "text", "text": exc.message}], "isError": True}


async def read_resource(target: UpstreamTarget, uri: str, sessions: UpstreamSessions) -> list[dict[str, Any]]:
    """``uri``: the URI asked for (a mirrored resource's own, or one a mirrored template serves);
    the upstream's URIs are not renamed, only its names are."""
    upstream = target.config.name

    async def operation(session: ClientSession) -> list[dict[str, Any]]:
        request = sdk.ReadResourceRequest(params=sdk.ReadResourceRequestParams(uri=uri))
        result = await session.send_request(request, sdk.ReadResourceResult)
        return list(_wire(result, upstream)["contents"])

    return list(await _protocol(run(sessions, target.config, "resources/read", uri, operation)))


async def get_prompt(target: UpstreamTarget, arguments: Mapping[str, str], ctx: Context,
                     sessions: UpstreamSessions) -> dict[str, Any]:
    upstream = target.config.name

    async def operation(session: ClientSession) -> dict[str, Any]:
        params = sdk.GetPromptRequestParams(name=target.name, arguments=dict(arguments))
        result = await session.send_request(sdk.GetPromptRequest(params=params), sdk.GetPromptResult)
        return _wire(result, upstream)

    return dict(await _protocol(run(sessions, target.config, "prompts/get", target.name, operation)))


async def complete(target: UpstreamTarget, ref_type: str, argument_name: str, value: str,
                   context_arguments: Mapping[str, str], sessions: UpstreamSessions) -> Completion:
    """``ref_type``: ``ref/prompt`` (sent with the upstream's prompt name) or ``ref/resource``
    (with its URI template)."""
    ref: sdk.PromptReference | sdk.ResourceTemplateReference
    if ref_type == "ref/prompt":
        ref = sdk.PromptReference(type="ref/prompt", name=target.name)
    else:
        ref = sdk.ResourceTemplateReference(type="ref/resource", uri=target.name)

    async def operation(session: ClientSession) -> Completion:
        caps = session.server_capabilities
        if caps is None or caps.completions is None:
            # Not advertised (server/utilities/completion.mdx: servers that support completions
            # MUST declare the capability): nothing to suggest, and nothing asked of it.
            return Completion(values=())
        result = await session.complete(ref, {"name": argument_name, "value": value},
                                        dict(context_arguments) or None)
        found = result.completion
        return Completion(values=tuple(found.values[:100]), total=found.total, has_more=bool(found.has_more))

    completion: Completion = await _protocol(
        run(sessions, target.config, "completion/complete", target.name, operation))
    return completion


async def _protocol(call: Any) -> Any:
    """The upstream's failure as a JSON-RPC error of ours: its code when it answered with one."""
    try:
        return await call
    except UpstreamFailure as exc:
        raise MCPError(exc.message, code=exc.code or INTERNAL_ERROR) from None
