"""OpenTelemetry traces of MCP requests, off unless the standard ``OTEL_*`` environment asks.

    base.py     the seam the server and transports use (``RequestTracing``), the spans the rest
                of the code asks for (HTTP requests, children, a change's publish and fan-out),
                and trace ids for log lines; no
                OpenTelemetry import, so a process with tracing off never loads it
    config.py   whether the environment turns tracing on, and building it then
    otel.py     the OpenTelemetry implementation: one SERVER span per MCP request, named and
                attributed per the semantic conventions for MCP (open-telemetry/
                semantic-conventions-genai, docs/gen-ai/mcp.md), parented to the request's
                ``params._meta`` trace context (SEP-414) or else the HTTP request's span (itself
                the child of the ``traceparent`` header)

With tracing off the request path pays one ``is None`` test (``Server.tracing``).
"""

from .base import (
    RequestTracing,
    batch,
    carrier,
    child,
    consumer,
    http_request,
    link,
    log_fields,
    producer,
    recording,
)
from .config import from_environment, tracing_enabled

__all__ = [
    "RequestTracing",
    "batch",
    "carrier",
    "child",
    "consumer",
    "from_environment",
    "http_request",
    "link",
    "log_fields",
    "producer",
    "recording",
    "tracing_enabled",
]
