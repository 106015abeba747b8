"""What an upstream says to us during a call, passed on to our client (issue 40 item 4): the
``Relay`` of one call, built from its ``Context`` (``mcp_protocol/context.py``).

- ``notifications/progress`` for the call's progress token → ``ctx.report_progress`` (increasing
  values only, none after our response: basic/utilities/progress.mdx);
- ``notifications/message`` → ``ctx.log`` (filtered by our client's level; dropped in a
  2026-07-28 request that did not ask for logs: server/utilities/logging.mdx);
- the upstream's server→client requests (``elicitation/create``, ``sampling/createMessage``,
  ``roots/list``) → ``ctx.request``, which works in both of our eras (a real request on our
  client's stream, or an input-required round: ``mcp_protocol/inputs.py``), only when our client
  declared the capability (lifecycle.mdx: only negotiated capabilities are used). Otherwise the
  upstream gets a JSON-RPC error (2025 era) or the call fails naming the capability (2026-07-28,
  where the upstream asks by an input-required result, which cannot be answered with an error).

A 2026-07-28 upstream is told, per request, exactly the capabilities our client declared
(``capabilities``) and our client's log level (``log_level``); a 2025 upstream was told at the
handshake that we have all three (``connect.py``), so its capability-gated tools are listed, and
gets the error above when the caller lacks one.
"""

from __future__ import annotations

from typing import Any

from mcp_protocol.context import Context
from mcp_protocol.errors import ClientRequestError, InvalidParams

METHOD_NOT_FOUND = -32601
INTERNAL_ERROR = -32603
CAPABILITY_OF = {"elicitation/create": "elicitation", "sampling/createMessage": "sampling",
                 "roots/list": "roots"}
MAX_INPUT_ROUNDS = 8  # input-required rounds of one call: an upstream asking forever is cut off


class NeedsCapability(Exception):
    """A 2026-07-28 upstream asked for something our client did not declare it can do."""


class Relay:
    def __init__(self, ctx: Context | None) -> None:
        self.ctx = ctx
        # The token the upstream request carries (not our client's: the upstream need not know it).
        # Set here when progress is wanted; the channel replaces it with one unique among its
        # requests before sending (wire.py).
        self.progress_token: str | None = "p" if ctx is not None and ctx.progress_token is not None else None

    def capabilities(self) -> dict[str, Any]:
        if self.ctx is None:
            return {}
        declared = self.ctx.client_capabilities
        return {name: declared[name] for name in ("elicitation", "sampling", "roots") if name in declared}

    def log_level(self) -> str | None:
        return self.ctx.session.log_level if self.ctx is not None else None

    async def notified(self, method: str, params: Any) -> None:
        ctx = self.ctx
        if ctx is None or not isinstance(params, dict):
            return
        if method == "notifications/progress":
            progress = params.get("progress")
            if self.progress_token is None or params.get("progressToken") != self.progress_token:
                return
            if isinstance(progress, int | float) and not isinstance(progress, bool):
                total = params.get("total")
                message = params.get("message")
                await ctx.report_progress(progress, total if isinstance(total, int | float) else None,
                                          message if isinstance(message, str) else None)
        elif method == "notifications/message":
            level, logger = params.get("level"), params.get("logger")
            try:
                await ctx.log(str(level), params.get("data"), logger if isinstance(logger, str) else None)
            except InvalidParams:
                pass  # an unknown level: nothing we can relay faithfully

    async def asked(self, method: str, params: Any) -> dict[str, Any]:
        """The reply to an upstream's server→client request: ``{"result": …}`` or ``{"error": …}``."""
        capability = CAPABILITY_OF.get(method)
        if capability is None:
            return {"error": {"code": METHOD_NOT_FOUND, "message": f"{method} is not relayed"}}
        if self.ctx is None or capability not in self.ctx.client_capabilities:
            return {"error": {"code": METHOD_NOT_FOUND,
                              "message": f"the client did not declare the {capability!r} capability"}}
        try:
            result = await self.ctx.request(method, params if isinstance(params, dict) else None, capability)
        except ClientRequestError as exc:
            error = exc.error if isinstance(exc.error, dict) and "code" in exc.error else None
            return {"error": error or {"code": INTERNAL_ERROR, "message": exc.message}}
        return {"result": result}

    async def answers(self, requests: Any) -> dict[str, Any]:
        """The ``inputResponses`` for a 2026-07-28 upstream's ``inputRequests``, asked of our client
        in the upstream's order under the upstream's keys (so a replayed run of ours, in our own
        2026-07-28 era, finds each answer under the same key)."""
        if not isinstance(requests, dict) or not requests:
            return {}
        found: dict[str, Any] = {}
        for key, request in requests.items():
            method = request.get("method") if isinstance(request, dict) else None
            capability = CAPABILITY_OF.get(str(method))
            if capability is None:
                raise NeedsCapability(f"it asked for {method!r}, which is not relayed")
            if self.ctx is None or capability not in self.ctx.client_capabilities:
                raise NeedsCapability(f"it needs the client capability {capability!r}, which the client "
                                      "did not declare")
            params = request.get("params")
            asked = params if isinstance(params, dict) else None
            found[str(key)] = await self.ctx.request(str(method), asked, capability, key=str(key))
        return found
