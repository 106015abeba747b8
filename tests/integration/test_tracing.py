"""OpenTelemetry traces (mcp_protocol/tracing/): a real server process exports with the real OTLP
exporter to a real receiver on loopback (tests/support/otlp.py), which decodes the protobuf.

Pinned (open-telemetry/semantic-conventions-genai docs/gen-ai/mcp.md, "Server" and "Context
propagation"; SEP-414): one SERVER span per request named ``{method} {target}``; its parent is
the request's ``params._meta`` trace context, else the HTTP request's span (``POST /mcp``, the
child of the ``traceparent`` header), which is linked when ``_meta`` is the parent;
``error.type`` is ``tool_error`` for an ``isError`` result and the JSON-RPC code for an error;
the session id is never exported whole.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator

import httpx
import pytest

from mcp_protocol.session import SHOWN_PREFIX
from tests.support import MEMORY_PROVIDER, REGISTRY_PROVIDER, LiveServer
from tests.support.mcp_http import (
    POST_HEADERS,
    initialize_message,
    modern_headers,
    modern_message,
    notification,
    request,
    session_headers,
)
from tests.support.otlp import OtlpReceiver
from tests.support.upstream import Upstream

pytestmark = pytest.mark.timeout(120)
SERVER, CLIENT = 2, 3  # SpanKind in the OTLP protobuf
ERROR = 2  # Status.STATUS_CODE_ERROR


def traceparent() -> tuple[str, str, str]:
    trace_id, span_id = secrets.token_hex(16), secrets.token_hex(8)
    return f"00-{trace_id}-{span_id}-01", trace_id, span_id


@pytest.fixture(scope="module")
def traced() -> Iterator[tuple[LiveServer, OtlpReceiver]]:
    with OtlpReceiver() as otlp:
        env = {
            "OTEL_EXPORTER_OTLP_ENDPOINT": otlp.endpoint,
            "OTEL_BSP_SCHEDULE_DELAY": "50",  # ms: export soon, for the test to read
            "OTEL_SERVICE_NAME": "mcpsite-test",
            "MCP_LOG_FORMAT": "json",
        }
        server = LiveServer(env=env, provider=MEMORY_PROVIDER).start()
        try:
            yield server, otlp
        finally:
            server.stop()


def open_session(client: httpx.Client, url: str) -> str:
    opened = client.post(url, headers=POST_HEADERS, json=initialize_message())
    session = opened.headers["mcp-session-id"]
    client.post(url, headers=session_headers(session), json=notification("notifications/initialized"))
    return session


def test_a_tools_call_is_one_server_span_parented_to_the_http_traceparent(traced) -> None:
    server, otlp = traced
    header, trace_id, parent_id = traceparent()
    with httpx.Client(timeout=10) as client:
        session = open_session(client, server.url)
        called = client.post(server.url, headers={**session_headers(session), "traceparent": header},
                             json=request(7, "tools/call", {"name": "echo", "arguments": {"message": "hi"}}))
        assert called.status_code == 200, called.text
    http = otlp.wait_for(lambda s: s.trace_id == trace_id and s.name == "POST /mcp")
    assert http.parent_span_id == parent_id and http.kind == SERVER
    span = otlp.wait_for(lambda s: s.trace_id == trace_id and s.name == "tools/call echo")
    assert span.parent_span_id == http.span_id and span.kind == SERVER
    assert span.attributes["mcp.method.name"] == "tools/call"
    assert span.attributes["gen_ai.tool.name"] == "echo"
    assert span.attributes["gen_ai.operation.name"] == "execute_tool"
    assert span.attributes["jsonrpc.request.id"] == "7"
    assert span.attributes["mcp.protocol.version"] == "2025-11-25"
    assert span.attributes["mcp.session.id"] == session[:SHOWN_PREFIX]
    assert session not in json.dumps(span.attributes)
    assert "error.type" not in span.attributes
    assert span.resource["service.name"] == "mcpsite-test"
    assert span.resource["service.instance.id"]  # which worker


def test_the_meta_trace_context_is_the_parent_and_the_header_is_linked(traced) -> None:
    server, otlp = traced
    header, header_trace, header_span = traceparent()
    meta, meta_trace, meta_span = traceparent()
    message = modern_message(1, "tools/call", {"name": "echo", "arguments": {"message": "hi"}},
                             traceparent=meta)
    answer = httpx.post(server.url, headers={**modern_headers(message), "traceparent": header},
                        json=message, timeout=10)
    assert answer.status_code == 200, answer.text
    span = otlp.wait_for(lambda s: s.trace_id == meta_trace and s.name == "tools/call echo")
    assert span.parent_span_id == meta_span
    http = otlp.wait_for(lambda s: s.trace_id == header_trace and s.name == "POST /mcp")
    assert http.parent_span_id == header_span
    assert span.links == [(header_trace, http.span_id)]  # the HTTP request's span, linked
    assert span.attributes["mcp.protocol.version"] == "2026-07-28"
    assert "mcp.session.id" not in span.attributes  # stateless: no session


def test_a_tool_error_and_a_json_rpc_error_set_error_type(traced) -> None:
    server, otlp = traced
    failing, failing_trace, _ = traceparent()
    missing, missing_trace, _ = traceparent()
    with httpx.Client(timeout=10) as client:
        session = open_session(client, server.url)
        for header, params in ((failing, {"name": "fail", "arguments": {"reason": "no"}}),
                               (missing, {"name": "no_such_tool", "arguments": {}})):
            client.post(server.url, headers={**session_headers(session), "traceparent": header},
                        json=request(2, "tools/call", params))
    tool_error = otlp.wait_for(lambda s: s.trace_id == failing_trace and s.name == "tools/call fail")
    assert tool_error.attributes["error.type"] == "tool_error" and tool_error.status_code == ERROR
    unknown = otlp.wait_for(lambda s: s.trace_id == missing_trace and s.name.startswith("tools/call"))
    assert unknown.attributes["error.type"] == unknown.attributes["rpc.response.status_code"] == "-32602"
    assert unknown.status_code == ERROR and unknown.status_message


def test_a_request_without_trace_context_starts_its_own_trace(traced) -> None:
    server, otlp = traced
    with httpx.Client(timeout=10) as client:
        session = open_session(client, server.url)
        client.post(server.url, headers=session_headers(session), json=request(3, "tools/list"))
    shown = session[:SHOWN_PREFIX]
    span = otlp.wait_for(lambda s: s.name == "tools/list" and s.attributes.get("mcp.session.id") == shown)
    http = otlp.wait_for(lambda s: s.trace_id == span.trace_id and s.name == "POST /mcp")
    assert http.parent_span_id == "" and span.parent_span_id == http.span_id


def test_an_http_tool_propagates_its_upstream_calls_span() -> None:
    """The http kind's upstream call is a CLIENT span of the request's trace, and a tool that
    forwards trace context sends that span's ``traceparent``: the upstream's spans join the trace."""
    with OtlpReceiver() as otlp, Upstream() as api:
        tool = {"name": "traced_http", "kind": "http", "http_url": f"{api.url}/echo/traced",
                "http_forward_trace": True, "description": "d",
                "input_schema": {"type": "object", "properties": {}}}
        make = f"from registry.models import Tool; Tool.objects.create(**{tool!r})"
        env = {"MCP_PROVIDER": REGISTRY_PROVIDER, "REGISTRY_HTTP_ALLOWED_HOSTS": "127.0.0.1",
               "OTEL_EXPORTER_OTLP_ENDPOINT": otlp.endpoint, "OTEL_BSP_SCHEDULE_DELAY": "50"}
        header, trace_id, _ = traceparent()
        with LiveServer(env=env, load=[["shell", "-c", make]]) as server, httpx.Client(timeout=20) as client:
            session = open_session(client, server.url)
            called = client.post(server.url, headers={**session_headers(session), "traceparent": header},
                                 json=request(9, "tools/call", {"name": "traced_http", "arguments": {}}))
            assert called.json()["result"].get("isError") is not True, called.text
        upstream_call = otlp.wait_for(lambda s: s.trace_id == trace_id and s.name == "POST")
    assert upstream_call.kind == CLIENT
    assert upstream_call.attributes["http.response.status_code"] == 200
    sent = api.requests[-1].headers["traceparent"]
    assert sent == f"00-{trace_id}-{upstream_call.span_id}-01"
