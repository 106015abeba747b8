"""The tracing seam, free of OpenTelemetry: what the server calls, and what transports and log
formatters may ask, whether or not tracing is on."""

from __future__ import annotations

from collections.abc import Awaitable, Mapping
from contextlib import AbstractContextManager, nullcontext
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


class Hooks(Protocol):
    """What the OpenTelemetry side offers the rest of the code once tracing is on (otel.py)."""

    def log_ids(self) -> dict[str, str]: ...

    def child(
        self, name: str, attributes: Mapping[str, Any] | None, client: bool
    ) -> AbstractContextManager[Any]: ...

    def producer(self, name: str, attributes: Mapping[str, Any] | None) -> AbstractContextManager[Any]: ...

    def consumer(
        self, name: str, carrier: Mapping[str, str], attributes: Mapping[str, Any] | None
    ) -> AbstractContextManager[Any]: ...

    def carrier(self) -> dict[str, str]: ...

    def link(self, carrier: Mapping[str, str]) -> None: ...

    def recording(self) -> object | None: ...

    def batch(
        self, name: str, sources: list[object], attributes: Mapping[str, Any] | None
    ) -> AbstractContextManager[Any]: ...

    def http_request(
        self, carrier: Mapping[str, str], attributes: Mapping[str, Any]
    ) -> AbstractContextManager[Any]: ...


_hooks: Hooks | None = None
_NOTHING = nullcontext()


def install(hooks: Hooks | None) -> None:
    global _hooks
    _hooks = hooks


def log_fields() -> dict[str, str]:
    """``trace_id`` and ``span_id`` of the current span for a log line (JSON log format), or
    nothing when tracing is off or no span is current."""
    return _hooks.log_ids() if _hooks is not None else {}


def child(
    name: str, attributes: Mapping[str, Any] | None = None, *, client: bool = False
) -> AbstractContextManager[Any]:
    """A span inside the current one (a Redis round trip; ``client``: a call to another service,
    an http tool's upstream), entered as the span (None when off)."""
    return _NOTHING if _hooks is None else _hooks.child(name, attributes, client)


def producer(name: str, attributes: Mapping[str, Any] | None = None) -> AbstractContextManager[Any]:
    """A PRODUCER span around sending a message to other workers (a registry change)."""
    return _NOTHING if _hooks is None else _hooks.producer(name, attributes)


def carrier() -> dict[str, str]:
    """The current span's W3C trace context, to travel in a message (empty when off)."""
    return {} if _hooks is None else _hooks.carrier()


def link(carried: Mapping[str, str]) -> None:
    """Link the current span to the span that ``carried`` (from ``carrier()``) names: a server→
    client request's span to the POST that brought its answer, on this worker or another."""
    if _hooks is not None and "traceparent" in carried:
        _hooks.link(carried)


def recording() -> object | None:
    """The current span when it records (an opaque token for ``batch``), else None: what a
    queued item keeps so the batch that later handles it can link back to its request."""
    return None if _hooks is None else _hooks.recording()


def batch(
    name: str, sources: list[object], attributes: Mapping[str, Any] | None = None
) -> AbstractContextManager[Any]:
    """A span of its own for work done later in a batch for many requests (the audit write),
    linked to the spans ``recording()`` returned for them; nothing when none of them recorded."""
    if _hooks is None or not sources:
        return _NOTHING
    return _hooks.batch(name, sources, attributes)


def http_request(
    traceparent: str | None, tracestate: str | None, method: str, path: str
) -> AbstractContextManager[Any]:
    """A SERVER span for one HTTP request to the endpoint, the child of its ``traceparent``
    header: the session's store round trips are its children, and each MCP request's span (the
    child of the request's own ``_meta`` trace context when it has one, linked to this then)."""
    if _hooks is None:
        return _NOTHING
    carried = {"traceparent": traceparent} if traceparent else {}
    if tracestate and traceparent:
        carried["tracestate"] = tracestate
    return _hooks.http_request(carried, {"http.request.method": method, "url.path": path})


def consumer(
    name: str, carried: object, attributes: Mapping[str, Any] | None = None
) -> AbstractContextManager[Any]:
    """A CONSUMER span for handling a message, the child of the span that sent it (``carried``:
    the message's ``trace``, from ``carrier()``), so one trace shows a change reaching every
    worker; nothing when off or when the message carries no trace."""
    if _hooks is None or not isinstance(carried, dict):
        return _NOTHING
    return _hooks.consumer(name, {k: v for k, v in carried.items() if isinstance(v, str)}, attributes)
