"""``MCP_LOG_FORMAT=json``: one JSON object per line, carrying the request id, a truncated session
id and the principal of the ``/mcp`` request that logged it, and never a whole session id."""

from __future__ import annotations

import asyncio
import json
import logging

from mcp_protocol.transports import logcontext
from mcpsite.logformat import JSONFormatter

SESSION = "3f1c9a2b7d4e4f6a8b0c1d2e3f405162"


def line(message: str, *args: object, exc: BaseException | None = None) -> dict[str, object]:
    record = logging.LogRecord(
        "mcp_protocol.test",
        logging.ERROR,
        __file__,
        1,
        message,
        args,
        (type(exc), exc, exc.__traceback__) if exc else None,
    )
    text = JSONFormatter().format(record)
    assert "\n" not in text  # one line, whatever the traceback
    return dict(json.loads(text))


def test_a_line_outside_a_request_has_no_request_fields() -> None:
    async def outside() -> dict[str, object]:
        return line("started %s", "ok")

    got = asyncio.run(outside())  # a fresh context: nothing bound
    assert got["message"] == "started ok" and got["level"] == "ERROR"
    assert got["logger"] == "mcp_protocol.test" and str(got["time"]).endswith("+00:00")
    assert "request_id" not in got and "session" not in got


def test_a_line_inside_a_request_names_it_and_truncates_the_session() -> None:
    scope = {
        "headers": [(b"x-request-id", b"lb-1234"), (b"mcp-session-id", SESSION.encode())],
        logcontext.PRINCIPAL: "key:ci-bot",
    }

    async def inside() -> dict[str, object]:
        logcontext.bind(scope)
        try:
            raise ValueError("boom")
        except ValueError as exc:
            return line("failed", exc=exc)

    got = asyncio.run(inside())
    assert got["request_id"] == "lb-1234"
    assert got["session"] == SESSION[:8] + "…"
    assert got["principal"] == "key:ci-bot"
    assert "ValueError: boom" in str(got["exc"])
    assert SESSION not in json.dumps(got)


def test_without_a_usable_request_id_one_is_made_once_per_request() -> None:
    scope = {"headers": [(b"x-request-id", b"not a token\r\ninjected")]}

    async def twice() -> tuple[dict[str, object], dict[str, object]]:
        logcontext.bind(scope)
        return line("one"), line("two")

    first, second = asyncio.run(twice())
    assert first["request_id"] == second["request_id"]
    assert "injected" not in str(first["request_id"]) and len(str(first["request_id"])) == 16


def test_a_line_logged_inside_a_traced_span_carries_its_trace_and_span_ids() -> None:
    from opentelemetry.sdk.trace import TracerProvider

    from mcp_protocol.tracing import base, otel

    tracing = otel.OtelTracing(TracerProvider())  # not the global provider: nothing exported
    tracer = tracing.tracer
    base.install(tracing)
    try:
        assert "trace_id" not in line("outside any span")
        with tracer.start_as_current_span("tools/call echo") as span:
            inside = line("inside")
        context = span.get_span_context()
        assert inside["trace_id"] == format(context.trace_id, "032x")
        assert inside["span_id"] == format(context.span_id, "016x")
    finally:
        base.install(None)
