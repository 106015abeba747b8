"""Spans of MCP requests with the OpenTelemetry SDK (imported only when tracing is on).

One SERVER span per request, per the semantic conventions for MCP (open-telemetry/
semantic-conventions-genai, docs/gen-ai/mcp.md "Server"): named ``{mcp.method.name} {target}``
with the tool or prompt name as the target (never a resource URI: high cardinality), attributes
``mcp.method.name``, ``jsonrpc.request.id``, ``mcp.protocol.version``, ``mcp.session.id`` (its
first characters only: a session id is a credential), ``gen_ai.tool.name`` /
``gen_ai.operation.name = execute_tool``, ``gen_ai.prompt.name``, ``mcp.resource.uri``,
``enduser.id`` (the principal's id, never a token), and on failure ``error.type`` (the JSON-RPC
code, or ``tool_error`` for a result with ``isError``) with the span's status ERROR.

Parent: "MCP server instrumentation SHOULD, by default, use context extracted from MCP
params._meta as a parent ... and SHOULD link current ambient context" (ibid., "Context
propagation"; the keys are SEP-414's unprefixed ``traceparent``, ``tracestate``, ``baggage``).
Over HTTP the ambient context is the HTTP request's own SERVER span (``http_request``, the child
of its ``traceparent`` header), so the session's store round trips share the trace.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Awaitable, Mapping
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from opentelemetry import context, propagate, trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SpanExporter
from opentelemetry.trace import Link, SpanKind, Status, StatusCode

from ..jsonrpc import Request
from ..session import SHOWN_PREFIX, Session
from .base import install

_META_KEYS = ("traceparent", "tracestate", "baggage")  # SEP-414: unprefixed in params._meta
_NAMED = {"tools/call": "gen_ai.tool.name", "prompts/get": "gen_ai.prompt.name"}
_URI = frozenset({"resources/read", "resources/subscribe", "resources/unsubscribe"})


def worker_id() -> str:
    return f"{socket.gethostname()}-{os.getpid()}"


def _exporter(environ: Mapping[str, str], name: str) -> SpanExporter:
    if name == "console":
        return ConsoleSpanExporter()
    protocol = (
        environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") or environ.get("OTEL_EXPORTER_OTLP_PROTOCOL") or ""
    )
    if protocol.strip().lower() == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as Grpc

        return Grpc()
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as Http

    return Http()  # http/protobuf, the SDK's default protocol


class OtelTracing:
    def __init__(self, provider: TracerProvider) -> None:
        self.provider = provider
        self.tracer = provider.get_tracer("mcpsite")

    @classmethod
    def from_environment(
        cls, environ: Mapping[str, str], processors: tuple[SpanProcessor, ...] = ()
    ) -> OtelTracing:
        attributes: dict[str, str] = {"service.instance.id": worker_id()}
        resource = environ.get("OTEL_RESOURCE_ATTRIBUTES", "")
        if not (environ.get("OTEL_SERVICE_NAME") or "service.name=" in resource):
            attributes["service.name"] = "mcpsite"
        # The sampler (OTEL_TRACES_SAMPLER, _ARG) and the batch processor's OTEL_BSP_* settings
        # are read by the SDK.
        provider = TracerProvider(resource=Resource.create(attributes))
        names = environ.get("OTEL_TRACES_EXPORTER") or "otlp"
        for name in (n.strip().lower() for n in names.split(",")):
            if name and name != "none":
                provider.add_span_processor(BatchSpanProcessor(_exporter(environ, name)))
        for processor in processors:
            provider.add_span_processor(processor)
        # Global, so spans started elsewhere in the process (an http tool's upstream call) join
        # the request's trace.
        trace.set_tracer_provider(provider)
        tracing = cls(provider)
        install(tracing)
        return tracing

    async def serve(
        self, message: Request, session: Session, version: str, run: Awaitable[dict[str, Any] | None]
    ) -> dict[str, Any] | None:
        params = message.params or {}
        method = message.method
        attributes: dict[str, Any] = {
            "mcp.method.name": method,
            "jsonrpc.request.id": str(message.id),
            "mcp.protocol.version": version,
        }
        if not session.stateless:
            attributes["mcp.session.id"] = session.id[:SHOWN_PREFIX]
        if session.principal:
            attributes["enduser.id"] = session.principal
        span_name = method
        target = params.get("name") if method in _NAMED else None
        if isinstance(target, str):
            attributes[_NAMED[method]] = target
            span_name = f"{method} {target}"
            if method == "tools/call":
                attributes["gen_ai.operation.name"] = "execute_tool"
        elif method in _URI and isinstance(params.get("uri"), str):
            attributes["mcp.resource.uri"] = params["uri"]
        parent, links = _parent(params.get("_meta"))
        if parent is None and _unsampled():
            # The HTTP request's span was not sampled, and this span would follow it (parent-
            # based sampling): a non-recording span still costs the SDK ~14 us, so none is made.
            return await run
        with self.tracer.start_as_current_span(
            span_name,
            context=parent,
            kind=SpanKind.SERVER,
            attributes=attributes,
            links=links,
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            try:
                response = await run
            except BaseException as exc:
                span.set_attribute("error.type", type(exc).__qualname__)
                span.set_status(Status(StatusCode.ERROR))
                raise
            _outcome(span, response)
            return response

    def shutdown(self) -> None:
        self.provider.shutdown()

    # -- base.Hooks: spans the rest of the code asks for -------------------------------------------
    def log_ids(self) -> dict[str, str]:
        return current_ids()

    def child(
        self, name: str, attributes: Mapping[str, Any] | None, client: bool
    ) -> AbstractContextManager[Any]:
        if _unsampled():
            return _NOTHING  # inside a span that records nothing, a child would record nothing
        kind = SpanKind.CLIENT if client else SpanKind.INTERNAL
        return self.tracer.start_as_current_span(name, kind=kind, attributes=attributes)

    def producer(self, name: str, attributes: Mapping[str, Any] | None) -> AbstractContextManager[Any]:
        return self.tracer.start_as_current_span(name, kind=SpanKind.PRODUCER, attributes=attributes)

    def consumer(
        self, name: str, carrier: Mapping[str, str], attributes: Mapping[str, Any] | None
    ) -> AbstractContextManager[Any]:
        parent = propagate.extract(carrier) if "traceparent" in carrier else None
        kind = SpanKind.CONSUMER
        return self.tracer.start_as_current_span(name, context=parent, kind=kind, attributes=attributes)

    def http_request(
        self, carrier: Mapping[str, str], attributes: Mapping[str, Any]
    ) -> AbstractContextManager[Any]:
        parent = propagate.extract(carrier) if carrier else None
        name = f"{attributes['http.request.method']} {attributes['url.path']}"
        kind = SpanKind.SERVER
        return self.tracer.start_as_current_span(name, context=parent, kind=kind, attributes=attributes)

    def carrier(self) -> dict[str, str]:
        carried: dict[str, str] = {}
        propagate.inject(carried)
        return carried

    def recording(self) -> object | None:
        span = trace.get_current_span()
        return span.get_span_context() if span.is_recording() else None

    def batch(
        self, name: str, sources: list[object], attributes: Mapping[str, Any] | None
    ) -> AbstractContextManager[Any]:
        # A root span: the batch belongs to no one request. The SDK keeps at most
        # OTEL_SPAN_LINK_COUNT_LIMIT links (128 by default) and drops the rest.
        links = [Link(source) for source in sources if isinstance(source, trace.SpanContext)]
        return self.tracer.start_as_current_span(
            name, context=_ROOT, kind=SpanKind.INTERNAL, attributes=attributes, links=links
        )

    def link(self, carrier: Mapping[str, str]) -> None:
        span = trace.get_current_span()
        linked = trace.get_current_span(propagate.extract(carrier)).get_span_context()
        if span.is_recording() and linked.is_valid and linked != span.get_span_context():
            span.add_link(linked, {"mcp.link": "answered_in"})


def _parent(meta: object) -> tuple[Any, list[Link]]:
    """The request's ``_meta`` trace context as the parent, the ambient span (the HTTP request's)
    linked; without one, the ambient span is the parent."""
    carried = {}
    if isinstance(meta, dict):
        carried = {key: value for key in _META_KEYS if isinstance(value := meta.get(key), str)}
    if "traceparent" not in carried:
        return None, []
    ambient = trace.get_current_span().get_span_context()
    return propagate.extract(carried), [Link(ambient)] if ambient.is_valid else []


def _outcome(span: trace.Span, response: dict[str, Any] | None) -> None:
    if response is None:
        return
    error = response.get("error")
    if isinstance(error, dict):
        code = str(error.get("code"))
        span.set_attribute("error.type", code)
        span.set_attribute("rpc.response.status_code", code)
        message = error.get("message")
        span.set_status(Status(StatusCode.ERROR, message if isinstance(message, str) else None))
        return
    result = response.get("result")
    if isinstance(result, dict) and result.get("isError") is True:
        span.set_attribute("error.type", "tool_error")  # a tool's own failure: not a JSON-RPC error
        span.set_status(Status(StatusCode.ERROR))


def _unsampled() -> bool:
    """A span is current and it records nothing (its trace was not sampled)."""
    current = trace.get_current_span()
    return current.get_span_context().is_valid and not current.is_recording()


_NOTHING = nullcontext()
_ROOT = context.Context()  # no parent: a new trace


def current_ids() -> dict[str, str]:
    current = trace.get_current_span().get_span_context()
    if not current.is_valid:
        return {}
    return {"trace_id": format(current.trace_id, "032x"), "span_id": format(current.span_id, "016x")}
