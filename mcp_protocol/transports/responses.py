"""The one place where an exception becomes an HTTP status and a JSON-RPC error body on ``/mcp``.

Everything the endpoint rejects is raised as ``HTTPError`` (transport rules: headers, sessions,
Origin/Host) or arrives as an ``MCPError`` / ``StoreError``; ``wire_error`` maps each to a status
and an error object, and ``send_error`` writes it. Bodies carry ``"id": null`` unless the request
id is known ([11] basic/transports.mdx: "The HTTP response body MAY comprise a JSON-RPC error
response that has no id"). Anything unexpected is logged with its traceback and answered with a
generic -32603 and status 500. This module does not decide *when* to reject; callers do.

Status choices not fixed by the spec (documented in docs/reference/endpoint.md):

- ``SessionLimitReached`` → 503 with -32000 "Too many live sessions" (the cap is a capacity limit).
- ``UnknownEvent`` (a Last-Event-ID that is malformed, of another session, or evicted) → 400 with
  -32600: 404 is reserved for "this session is gone" ([L] transports.mdx "Session Management").
- ``StoreUnavailable`` (Redis down) → 503 with -32603.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from typing import Any

from ..errors import INTERNAL_ERROR, INVALID_REQUEST, MCPError
from ..jsonrpc import RequestId, dumps, error_response
from ..store_errors import SessionLimitReached, StoreUnavailable, UnknownEvent
from . import metrics

logger = logging.getLogger("mcp_protocol.transports")

Message = MutableMapping[str, Any]
Send = Callable[[Message], Awaitable[None]]
Receive = Callable[[], Awaitable[Message]]
Scope = MutableMapping[str, Any]
Headers = Sequence[tuple[bytes, bytes]]

JSON_HEADERS: list[tuple[bytes, bytes]] = [(b"content-type", b"application/json")]
SERVER_BUSY = -32000  # implementation-defined range (JSON-RPC 2.0 §5.1)


class HTTPError(Exception):
    """A rejection at the HTTP level, optionally with a JSON-RPC error object for the body."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        code: int = INVALID_REQUEST,
        data: Any = None,
        headers: Headers = (),
        body: bool = True,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code
        self.data = data
        self.headers = list(headers)
        self.body = body

    def to_error(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


# When to try again while the store is away (RFC 9110 §10.2.3: a 503 MAY say): the same 5 s the
# token endpoint and the REST API answer during an outage (mcp_django/cache_outage.py).
STORE_RETRY_AFTER = [(b"retry-after", b"5")]


def wire_error(exc: BaseException) -> tuple[int, dict[str, Any], list[tuple[bytes, bytes]]]:
    """(status, JSON-RPC error object, extra headers) for ``exc``."""
    if isinstance(exc, HTTPError):
        return exc.status, exc.to_error(), exc.headers
    if isinstance(exc, MCPError):
        return 400, exc.to_error(), []
    if isinstance(exc, SessionLimitReached):
        return (
            503,
            {
                "code": SERVER_BUSY,
                "message": f"{exc} (limit {exc.limit})",  # overall, or for this principal
                "data": {"limit": exc.limit},
            },
            [],
        )
    if isinstance(exc, UnknownEvent):
        return 400, {"code": INVALID_REQUEST, "message": f"Unknown Last-Event-ID: {exc}"}, []
    if isinstance(exc, StoreUnavailable):
        metrics.store_unavailable()
        logger.error("session/event store unavailable: %s", exc)
        return (
            503,
            {"code": INTERNAL_ERROR, "message": "Service unavailable: state store unreachable"},
            STORE_RETRY_AFTER,
        )
    logger.error("internal error on /mcp", exc_info=exc)
    return 500, {"code": INTERNAL_ERROR, "message": "Internal error"}, []


async def send_bytes(send: Send, status: int, body: bytes, headers: Headers = JSON_HEADERS) -> None:
    # A Content-Length spares the server chunked framing and the client its parsing.
    length = (b"content-length", b"%d" % len(body))
    await send({"type": "http.response.start", "status": status, "headers": [*headers, length]})
    await send({"type": "http.response.body", "body": body})


async def send_empty(send: Send, status: int, headers: Headers = ()) -> None:
    await send(
        {"type": "http.response.start", "status": status, "headers": [*headers, (b"content-length", b"0")]}
    )
    await send({"type": "http.response.body", "body": b""})


async def send_error(send: Send, exc: BaseException, request_id: RequestId | None = None) -> None:
    status, error, extra = wire_error(exc)
    if isinstance(exc, HTTPError) and not exc.body:
        await send_empty(send, status, extra)
        return
    await send_bytes(send, status, dumps(error_response(request_id, error)), [*JSON_HEADERS, *extra])


# 2026-07-28 streamable-http.mdx: an error response's HTTP status follows its code (unknown method →
# 404 + -32601; header/version/params problems → 400); the official SDK uses the same table.
MODERN_ERROR_STATUS: dict[int, int] = {
    -32700: 400,
    -32600: 400,
    -32602: 400,
    -32020: 400,
    -32021: 400,
    -32022: 400,
    -32601: 404,
}


def modern_status(response: dict[str, Any] | None) -> int:
    if response is None or "error" not in response:
        return 200
    return MODERN_ERROR_STATUS.get(response["error"].get("code"), 200)


class TrackedSend:
    """Wraps ``send`` to know whether the response started (an error after that can only be
    logged) and with which status (for the metrics)."""

    __slots__ = ("send", "started", "status")

    def __init__(self, send: Send) -> None:
        self.send = send
        self.started = False
        self.status = 0

    async def __call__(self, message: Any) -> None:
        if message["type"] == "http.response.start":
            self.started = True
            self.status = message["status"]
        await self.send(message)
