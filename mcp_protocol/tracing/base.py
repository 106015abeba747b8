"""The tracing seam, free of OpenTelemetry: what the server calls, and what transports and log
formatters may ask, whether or not tracing is on."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from contextvars import ContextVar
from typing import Any, Protocol

from ..jsonrpc import Request
from ..session import Session


class RequestTracing(Protocol):
    async def serve(
        self, message: Request, session: Session, version: str, run: Awaitable[dict[str, Any] | None]
    ) -> dict[str, Any] | None:
        """Await ``run`` (the request's response, or None for none) inside the request's span."""

    def shutdown(self) -> None:
        """Export what is buffered; called once when the process stops."""


# The W3C trace headers (``traceparent``, ``tracestate``) of the HTTP request being served, set by
# the transport only while tracing is on: the parent of a request whose ``_meta`` carries none.
incoming: ContextVar[Mapping[str, str] | None] = ContextVar("mcp_incoming_trace", default=None)

_log_ids: Callable[[], dict[str, str]] | None = None


def log_fields() -> dict[str, str]:
    """``trace_id`` and ``span_id`` of the current span for a log line (JSON log format), or
    nothing when tracing is off or no span is current."""
    return _log_ids() if _log_ids is not None else {}


def set_log_ids(source: Callable[[], dict[str, str]] | None) -> None:
    global _log_ids
    _log_ids = source
