"""OpenTelemetry traces of MCP requests, off unless the standard ``OTEL_*`` environment asks.

    base.py     the seam the server and transports use (``RequestTracing``), the transport's
                trace headers for the request being served, and trace ids for log lines; no
                OpenTelemetry import, so a process with tracing off never loads it
    config.py   whether the environment turns tracing on, and building it then
    otel.py     the OpenTelemetry implementation: one SERVER span per MCP request, named and
                attributed per the semantic conventions for MCP (open-telemetry/
                semantic-conventions-genai, docs/gen-ai/mcp.md), parented to the request's
                ``params._meta`` trace context (SEP-414) or else the HTTP ``traceparent`` header

With tracing off the request path pays one ``is None`` test (``Server.tracing``).
"""

from .base import RequestTracing, incoming, log_fields
from .config import from_environment, tracing_enabled

__all__ = ["RequestTracing", "from_environment", "incoming", "log_fields", "tracing_enabled"]
