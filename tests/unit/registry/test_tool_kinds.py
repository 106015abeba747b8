"""Every tool kind, called through the provider: handler, template and http (against a real local
HTTP server started by the test)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import MappingProxyType
from typing import Any

import pytest
from django.test import override_settings

from mcp_protocol.errors import ToolError
from mcp_protocol.methods.tools import execute_tool
from mcp_protocol.versions import LATEST
from registry import handlers
from registry.models import Tool
from registry.provider import RegistryProvider
from registry.snapshot import ToolSpec

from .conftest import make_context

pytestmark = pytest.mark.django_db


def make_tool(**fields: Any) -> Tool:
    base: dict[str, Any] = {"description": "d", "input_schema": {"type": "object", "properties": {}}}
    row = Tool(**{**base, **fields})
    row.full_clean()
    row.save()
    return row


def call(provider: RegistryProvider, name: str, arguments: dict[str, Any], **ctx: Any) -> dict[str, Any]:
    """Build the snapshot here, in the test's thread and transaction; run the call in a fresh loop."""
    return call_with(provider, name, arguments, make_context(**ctx))


def call_with(provider: RegistryProvider, name: str, arguments: dict[str, Any], ctx: Any) -> dict[str, Any]:
    tool = provider.snapshot().tool(name)
    assert tool is not None, f"{name} is not in the snapshot"
    # Through the core's execute_tool, as tools/call runs it: a ToolError becomes its result there.
    return asyncio.run(execute_tool(provider, tool, arguments, ctx, LATEST))


# -- handler kind -------------------------------------------------------------------------------------
@pytest.fixture
def scratch_handlers() -> Iterator[None]:
    @handlers.tool_handler("test.sync_sum")
    def sync_sum(arguments: dict[str, Any], ctx: Any) -> dict[str, Any]:
        return {"structuredContent": {"sum": arguments["a"] + arguments["b"]}}

    @handlers.tool_handler("test.blocks")
    async def blocks(arguments: dict[str, Any], ctx: Any) -> list[dict[str, Any]]:
        return [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}]

    @handlers.tool_handler("test.boom")
    async def boom(arguments: dict[str, Any], ctx: Any) -> str:
        raise RuntimeError("secret internal detail")

    @handlers.tool_handler("test.tool_error")
    async def tool_error(arguments: dict[str, Any], ctx: Any) -> str:
        raise ToolError(
            "bad input", content=[{"type": "text", "text": "bad input"}, {"type": "text", "text": "hint"}]
        )

    @handlers.tool_handler("test.bad_return")
    async def bad_return(arguments: dict[str, Any], ctx: Any) -> Any:
        return 42

    yield
    for name in ("test.sync_sum", "test.blocks", "test.boom", "test.tool_error", "test.bad_return"):
        handlers.unregister("tool", name)


def test_handler_returning_text_becomes_one_text_block(demo: None, provider: RegistryProvider) -> None:
    result = call(provider, "echo", {"message": "hello"})
    assert result == {"content": [{"type": "text", "text": "hello"}]}


def test_sync_handler_returning_structured_content_also_gets_its_json_text(
    scratch_handlers: None, provider: RegistryProvider
) -> None:
    make_tool(name="sum", kind="handler", handler="test.sync_sum")
    result = call(provider, "sum", {"a": 2, "b": 3})
    assert result["structuredContent"] == {"sum": 5}
    assert json.loads(result["content"][0]["text"]) == {"sum": 5}


def test_the_registry_runs_the_spec_its_snapshot_tool_carries_and_leaves_a_tool_error_to_the_core(
    scratch_handlers: None, provider: RegistryProvider
) -> None:
    make_tool(name="err", kind="handler", handler="test.tool_error")
    tool = provider.snapshot().tool("err")
    assert tool is not None and tool.target == ToolSpec(name="err", kind="handler", handler="test.tool_error")
    # The provider's state is not asked again for the tool: the call's snapshot resolved it.
    provider._state = dataclasses.replace(provider.state(), tools=MappingProxyType({}))
    with pytest.raises(ToolError, match="bad input"):
        asyncio.run(provider.call_tool(tool, {}, make_context()))


def test_handler_content_blocks_and_tool_errors(scratch_handlers: None, provider: RegistryProvider) -> None:
    make_tool(name="blocks", kind="handler", handler="test.blocks")
    make_tool(name="err", kind="handler", handler="test.tool_error")
    assert [b["text"] for b in (call(provider, "blocks", {}))["content"]] == ["one", "two"]
    result = call(provider, "err", {})
    assert result == {
        "isError": True,
        "content": [{"type": "text", "text": "bad input"}, {"type": "text", "text": "hint"}],
    }


def test_unexpected_handler_exception_is_an_error_result_without_internals(
    scratch_handlers: None, provider: RegistryProvider
) -> None:
    make_tool(name="boom", kind="handler", handler="test.boom")
    make_tool(name="bad_return", kind="handler", handler="test.bad_return")
    result = call(provider, "boom", {})
    assert result["isError"] is True and "internal error" in result["content"][0]["text"]
    assert "secret" not in json.dumps(result)
    assert (call(provider, "bad_return", {}))["isError"] is True


def test_handler_unregistered_after_save_is_a_clear_tool_error(
    scratch_handlers: None, provider: RegistryProvider
) -> None:
    make_tool(name="gone", kind="handler", handler="test.blocks")
    handlers.unregister("tool", "test.blocks")
    result = call(provider, "gone", {})
    assert result["isError"] and "not registered" in result["content"][0]["text"]


def test_handler_context_progress_logging_sampling_elicitation_roots(
    conformance: None, demo: None, provider: RegistryProvider
) -> None:
    ctx = make_context(progress_token="p1")
    result = call_with(provider, "test_tool_with_progress", {}, ctx)
    assert result["content"][0]["text"] == "p1"
    assert [p["progress"] for _, p in ctx.outbound.notifications] == [0, 50, 100]  # type: ignore[attr-defined]

    ctx = make_context(log_level="debug")
    result = call_with(provider, "test_tool_with_logging", {}, ctx)
    assert [p["data"] for m, p in ctx.outbound.notifications if m == "notifications/message"] == [  # type: ignore[attr-defined]
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
    ]

    answers = {
        "sampling/createMessage": {
            "role": "assistant",
            "model": "m",
            "content": {"type": "text", "text": "This is a test response from the client"},
        },
        "elicitation/create": {
            "action": "accept",
            "content": {"username": "testuser", "email": "test@example.com"},
        },
        "roots/list": {"roots": [{"uri": "file:///work", "name": "work"}]},
    }
    caps = {"sampling": {}, "elicitation": {}, "roots": {}}
    result = call(provider, "test_sampling", {"prompt": "Hi"}, answers=answers, capabilities=caps)
    assert result["content"][0]["text"] == "LLM response: This is a test response from the client"
    result = call(provider, "test_elicitation", {"message": "Who?"}, answers=answers, capabilities=caps)
    assert result["content"][0]["text"].startswith("User response: accept, ")
    result = call(provider, "list_roots", {}, answers=answers, capabilities=caps)
    assert result["structuredContent"] == {"roots": [{"uri": "file:///work", "name": "work"}]}
    # Without the capability the tool gets a clear error result, not a crash.
    result = call(provider, "test_sampling", {"prompt": "Hi"})
    assert result["isError"] and "sampling" in result["content"][0]["text"]


# -- template kind ------------------------------------------------------------------------------------
def test_template_kind_renders_text_and_typed_structured_content(provider: RegistryProvider) -> None:
    make_tool(
        name="tpl",
        kind="template",
        template_text="Hi {{ name }}, n={{ n }}, j={{ name|json }}",
        template_structured={"who": "{{ name }}", "n": "{{n}}", "label": "#{{ n }}"},
        output_schema={"type": "object", "properties": {"n": {"type": "integer"}}},
        input_schema={"type": "object", "properties": {"name": {"type": "string"}, "n": {"type": "integer"}}},
    )
    result = call(provider, "tpl", {"name": 'Bo"b', "n": 3})
    assert result["content"] == [{"type": "text", "text": 'Hi Bo"b, n=3, j="Bo\\"b"'}]
    assert result["structuredContent"] == {"who": 'Bo"b', "n": 3, "label": "#3"}


def test_template_kind_gives_no_access_to_python_objects(provider: RegistryProvider) -> None:
    from django.core.exceptions import ValidationError

    row = Tool(
        name="tpl",
        kind="template",
        input_schema={"type": "object", "properties": {"name": {"type": "string"}}},
        template_text=(
            "{{ name.__class__ }}|{{ name.upper }}|{% for x in y %}{{ __import__ }}|{{ settings.SECRET_KEY }}"
        ),
    )
    with pytest.raises(ValidationError):  # refused at save (issue 31) ...
        row.full_clean()
    row.save()  # ... and harmless when written around validation (a raw write, an older row)
    result = call(provider, "tpl", {"name": "x"})
    # Only plain keys of the arguments exist: dotted names are not looked up on objects, tags are text.
    assert result["content"][0]["text"] == "||{% for x in y %}|"


# -- http kind ----------------------------------------------------------------------------------------
class Recorder(BaseHTTPRequestHandler):
    received: list[dict[str, Any]] = []
    release = threading.Event()

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).received.append({"path": self.path, "body": body, "headers": dict(self.headers)})
        if self.path == "/trickle":
            self.trickle()
            return
        if self.path == "/slow":
            self.release.wait(5)
            reply, status, ctype = b"{}", 200, "application/json"
        elif self.path == "/structured":
            reply, status, ctype = json.dumps({"echo": body}).encode(), 200, "application/json"
        elif self.path == "/result":
            reply, status, ctype = (
                json.dumps({"content": [{"type": "text", "text": "custom"}], "isError": False}).encode(),
                200,
                "application/json",
            )
        elif self.path == "/text":
            reply, status, ctype = b"plain words", 200, "text/plain"
        else:
            reply, status, ctype = b"upstream exploded", 502, "text/plain"
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def trickle(self) -> None:
        """A reply that never finishes: one byte per 50 ms, well inside any per-read timeout, until
        the test releases it (or 20 s pass)."""
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", "400")
        self.end_headers()
        for _ in range(400):
            try:
                self.wfile.write(b".")
                self.wfile.flush()
            except OSError:  # the client gave up and closed the connection
                return
            if self.release.wait(0.05):
                return

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def http_server() -> Iterator[str]:
    Recorder.received = []
    Recorder.release = threading.Event()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    Recorder.release.set()
    server.shutdown()
    server.server_close()
    thread.join(5)


@override_settings(REGISTRY_HTTP_ALLOWED_HOSTS=["127.0.0.1"])
def test_http_kind_posts_the_arguments_and_maps_a_json_object_to_structured_content(
    http_server: str, provider: RegistryProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCP_TOOL_SECRET_TEST", "s3cret")
    make_tool(
        name="remote",
        kind="http",
        http_url=f"{http_server}/structured",
        http_secret_header="X-Api-Key",
        http_secret_env="MCP_TOOL_SECRET_TEST",
    )
    result = call(provider, "remote", {"q": "weather", "n": 2})
    assert result["structuredContent"] == {"echo": {"q": "weather", "n": 2}}
    assert json.loads(result["content"][0]["text"]) == {"echo": {"q": "weather", "n": 2}}
    sent = Recorder.received[0]
    assert sent["body"] == {"q": "weather", "n": 2}
    assert sent["headers"]["X-Api-Key"] == "s3cret"
    assert sent["headers"]["Content-Type"] == "application/json"


@override_settings(REGISTRY_HTTP_ALLOWED_HOSTS=["127.0.0.1"])
def test_http_kind_maps_call_tool_results_text_and_upstream_errors(
    http_server: str, provider: RegistryProvider
) -> None:
    make_tool(name="as_result", kind="http", http_url=f"{http_server}/result")
    make_tool(name="as_text", kind="http", http_url=f"{http_server}/text")
    make_tool(name="failing", kind="http", http_url=f"{http_server}/fail")
    # The upstream's CallToolResult as the client gets it (an isError false is left off the wire).
    assert call(provider, "as_result", {}) == {"content": [{"type": "text", "text": "custom"}]}
    assert call(provider, "as_text", {}) == {"content": [{"type": "text", "text": "plain words"}]}
    result = call(provider, "failing", {})
    assert result["isError"] is True
    assert "answered HTTP 502: upstream exploded" in result["content"][0]["text"]


@override_settings(REGISTRY_HTTP_ALLOWED_HOSTS=["example.com", "*.example.org"])
def test_http_kind_refuses_a_host_off_the_allow_list_without_connecting(
    http_server: str, provider: RegistryProvider
) -> None:
    with override_settings(REGISTRY_HTTP_ALLOWED_HOSTS=["127.0.0.1"]):  # allowed when saved, not now
        make_tool(name="remote", kind="http", http_url=f"{http_server}/structured")
    result = call(provider, "remote", {})
    assert result["isError"] is True
    assert (
        "'127.0.0.1'" in result["content"][0]["text"]
        and "REGISTRY_HTTP_ALLOWED_HOSTS" in result["content"][0]["text"]
    )
    assert Recorder.received == []


@override_settings(REGISTRY_HTTP_ALLOWED_HOSTS=["127.0.0.1"])
def test_http_kind_times_out_with_a_clear_error(http_server: str, provider: RegistryProvider) -> None:
    make_tool(name="slow", kind="http", http_url=f"{http_server}/slow", http_timeout=0.3)
    result = call(provider, "slow", {})
    Recorder.release.set()
    assert result["isError"] is True
    assert "did not answer within 0.3 s" in result["content"][0]["text"]


@override_settings(REGISTRY_HTTP_ALLOWED_HOSTS=["127.0.0.1"])
def test_http_kind_timeout_is_a_deadline_for_the_whole_call_even_when_bytes_keep_trickling(
    http_server: str, provider: RegistryProvider
) -> None:
    make_tool(name="trickle", kind="http", http_url=f"{http_server}/trickle", http_timeout=0.5)
    started = time.monotonic()
    result = call(provider, "trickle", {})
    elapsed = time.monotonic() - started
    Recorder.release.set()
    assert result["isError"] is True
    assert "did not answer within 0.5 s" in result["content"][0]["text"]
    # Per-read timeouts alone would wait for all 400 bytes (20 s); the deadline ends it at 0.5 s.
    assert elapsed < 5, elapsed


@override_settings(REGISTRY_HTTP_ALLOWED_HOSTS=["127.0.0.1"])
def test_http_kind_with_its_secret_variable_unset_fails_without_calling(
    http_server: str, provider: RegistryProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MCP_TOOL_SECRET_TEST", raising=False)
    make_tool(
        name="remote",
        kind="http",
        http_url=f"{http_server}/structured",
        http_secret_header="Authorization",
        http_secret_env="MCP_TOOL_SECRET_TEST",
    )
    result = call(provider, "remote", {})
    assert result["isError"] and "MCP_TOOL_SECRET_TEST" in result["content"][0]["text"]
    assert Recorder.received == []


def test_http_kind_connection_refused_is_an_error_result(provider: RegistryProvider) -> None:
    import socket

    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with override_settings(REGISTRY_HTTP_ALLOWED_HOSTS=["127.0.0.1"]):
        make_tool(name="down", kind="http", http_url=f"http://127.0.0.1:{port}/x", http_timeout=2)
        result = call(provider, "down", {})
    assert result["isError"] and "request to 127.0.0.1 failed" in result["content"][0]["text"]
