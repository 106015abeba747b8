"""Calls over the legacy HTTP+SSE transport (2024-11-05), which the lean path (``wire.py``) does not
speak: sent through the official SDK's session that made the handshake, with the lean path's
contract (a wire-JSON result; ``wire.RpcError``, ``wire.Expired``, ``wire.Dropped``,
``stream.TooLarge``, ``stream.Malformed``) so ``calls.py`` sees one kind of channel.

Progress is relayed (the SDK's ``progress_callback``, by the call's token); the upstream's log
notifications and server→client requests reach the session's callbacks, outside the call, and are
routed to it by the session's ``sdk_relay.Calls`` (while it is the only call in flight there).
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

import pydantic
from mcp import types as sdk
from mcp.client.session import ClientSession
from mcp.shared.exceptions import MCPError as SDKError
from mcp.types import CONNECTION_CLOSED, INVALID_REQUEST, REQUEST_TIMEOUT

from . import stream
from .relay import Relay
from .sdk_relay import Calls
from .wire import MAX_RESULT_BYTES, Dropped, Expired, RpcError

# method -> (request type, its params type, the result type)
TYPES: dict[str, tuple[Any, Any, Any]] = {
    "tools/call": (sdk.CallToolRequest, sdk.CallToolRequestParams, sdk.CallToolResult),
    "resources/read": (sdk.ReadResourceRequest, sdk.ReadResourceRequestParams, sdk.ReadResourceResult),
    "prompts/get": (sdk.GetPromptRequest, sdk.GetPromptRequestParams, sdk.GetPromptResult),
    "completion/complete": (sdk.CompleteRequest, sdk.CompleteRequestParams, sdk.CompleteResult),
}


async def request(session: ClientSession, method: str, params: dict[str, Any],
                  relay: Relay, calls: Calls | None = None) -> dict[str, Any]:
    if method not in TYPES:  # e.g. tasks/get: tasks are not followed over this transport
        raise RpcError(-32601, f"{method} is not sent over the legacy HTTP+SSE transport")
    request_type, params_type, result_type = TYPES[method]
    progress: Any = None
    if relay.progress_token is not None:

        async def relayed(value: float, total: float | None, message: str | None) -> None:
            await relay.notified("notifications/progress", {"progressToken": relay.progress_token,
                                                            "progress": value, "total": total,
                                                            "message": message})

        progress = relayed

    try:
        typed = request_type(params=params_type.model_validate(params))
        async with calls.during(relay) if calls is not None else contextlib.nullcontext():
            result = await session.send_request(typed, result_type, progress_callback=progress)
    except SDKError as exc:
        if exc.code == INVALID_REQUEST and "session" in exc.error.message.lower():
            # The upstream's 404 for our session: the SDK's stand-in is "Session terminated", or
            # the JSON-RPC error of the 404's body ("Session not found"). Not processed.
            raise Expired(exc.error.message) from None
        if exc.code in (CONNECTION_CLOSED, REQUEST_TIMEOUT):
            raise Dropped(exc.error.message) from None
        raise RpcError(exc.code, exc.error.message) from None
    except pydantic.ValidationError:
        raise stream.Malformed("a result that is not the method's") from None
    wire: dict[str, Any] = result.model_dump(by_alias=True, mode="json", exclude_none=True)
    if len(json.dumps(wire, separators=(",", ":"))) > MAX_RESULT_BYTES:
        raise stream.TooLarge(f"a result of more than {MAX_RESULT_BYTES} bytes")
    return wire
