"""The protocol's exception tree and the spec's error codes.

Everything the core raises on purpose derives from ``MCPError``; a transport turns one into a
wire error in exactly one place. Anything else escaping a handler is an internal error: logged
with its traceback, answered with a generic -32603.

    MCPError                      carries a JSON-RPC ``code``, ``message`` and optional ``data``
    ├── ParseError                -32700  body is not JSON
    ├── InvalidRequest            -32600  JSON, but not a valid JSON-RPC message for this session
    ├── MethodNotFound            -32601  unknown method, or one of an undeclared capability
    ├── InvalidParams             -32602  bad params, unknown tool/prompt, bad cursor, bad level
    │   └── UnsupportedVersion    -32602 legacy / -32022 modern (code chosen by the raiser)
    ├── InternalError             -32603
    │   └── WorkerStopped         -32603  the worker running the request stopped (may be retried)
    ├── ResourceNotFound          -32002 legacy; the core maps it to -32602 for 2026-07-28
    ├── HeaderMismatch            -32020  [2026-07-28] header ≠ body, or a required header missing
    └── MissingClientCapability   -32021  [2026-07-28]
    ToolError                     not a protocol error: becomes a result with ``isError: true``
    RequestCancelled              the client cancelled; no response is sent
    ClientRequestError            a server→client request failed (error reply, timeout, no capability)
"""

from __future__ import annotations

from typing import Any

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
# basic/index.mdx ([24]-[11]): resource not found; server/resources.mdx of 2026-07-28 moves it to -32602.
RESOURCE_NOT_FOUND = -32002
# 2026-07-28 basic/transports/streamable-http.mdx "Request Metadata" (renumbered from the draft's -32001).
HEADER_MISMATCH = -32020
MISSING_REQUIRED_CLIENT_CAPABILITY = -32021
UNSUPPORTED_PROTOCOL_VERSION = -32022


class MCPError(Exception):
    """A protocol error with a JSON-RPC error object."""

    code: int = INTERNAL_ERROR
    default_message: str = "Internal error"

    def __init__(self, message: str | None = None, data: Any = None, *, code: int | None = None) -> None:
        self.message = message or self.default_message
        self.data = data
        if code is not None:
            self.code = code
        super().__init__(self.message)

    def to_error(self) -> dict[str, Any]:
        """The JSON-RPC ``error`` member."""
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


class ParseError(MCPError):
    code = PARSE_ERROR
    default_message = "Parse error"


class InvalidRequest(MCPError):
    code = INVALID_REQUEST
    default_message = "Invalid Request"


class MethodNotFound(MCPError):
    code = METHOD_NOT_FOUND
    default_message = "Method not found"


class InvalidParams(MCPError):
    code = INVALID_PARAMS
    default_message = "Invalid params"


class UnsupportedVersion(InvalidParams):
    default_message = "Unsupported protocol version"


class InternalError(MCPError):
    code = INTERNAL_ERROR
    default_message = "Internal error"


class WorkerStopped(InternalError):
    """The worker running the request stopped before answering it (killed, or stopped past its
    grace period): the request did not complete here, and the client may send it again."""

    default_message = "Internal error: the worker running this request stopped; the request may be retried"


class ResourceNotFound(MCPError):
    code = RESOURCE_NOT_FOUND
    default_message = "Resource not found"

    def __init__(self, uri: str) -> None:
        super().__init__(f"Resource not found: {uri}", {"uri": uri})
        self.uri = uri


class HeaderMismatch(MCPError):
    code = HEADER_MISMATCH
    default_message = "Header mismatch"


class MissingClientCapability(MCPError):
    code = MISSING_REQUIRED_CLIENT_CAPABILITY
    default_message = "Missing required client capability"


class ToolError(Exception):
    """Raised by a tool implementation: the call returns ``isError: true`` with this text.

    ``content`` may carry richer blocks than the message; it defaults to one text block.
    """

    def __init__(self, message: str, content: list[dict[str, Any]] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.content = content if content is not None else [{"type": "text", "text": message}]


class RequestCancelled(Exception):
    """The request was cancelled by the client (notifications/cancelled, or a closed stream in
    2026-07-28); the core sends no response for it."""


class ClientRequestError(Exception):
    """A server→client request (sampling, elicitation, roots) did not produce a result.

    ``error`` is the client's JSON-RPC error object when it answered with one.
    """

    def __init__(self, message: str, error: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.error = error
