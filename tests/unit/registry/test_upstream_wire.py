"""The calls' lean path (registry/upstreams/stream.py, wire.py) against a real aiohttp server on
loopback: a JSON answer, an SSE answer whose progress and log notifications and server→client
request come before the result (our reply POSTed back), the event framing across chunk
boundaries, the 2025 and 2026-07-28 headers, and what each failure is (404 on the session, a
JSON-RPC error in a 4xx body, a body over the cap, a body that is not JSON-RPC).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from django.test import override_settings

from registry.upstreams import stream
from registry.upstreams.relay import Relay
from registry.upstreams.wire import Channel, Expired, RpcError
from tests.support.ports import free_port

pytestmark = pytest.mark.timeout(30)


class Recording(Relay):
    """A relay with no client behind it: what the upstream said, and a canned answer."""

    def __init__(self, modern_capabilities: dict[str, Any] | None = None) -> None:
        super().__init__(None)
        self.progress_token = "p"
        self.heard: list[tuple[str, Any]] = []
        self._capabilities = modern_capabilities or {}

    def capabilities(self) -> dict[str, Any]:
        return self._capabilities

    async def notified(self, method: str, params: Any) -> None:
        self.heard.append((method, params))

    async def asked(self, method: str, params: Any) -> dict[str, Any]:
        self.heard.append((method, params))
        return {"result": {"action": "accept", "content": {"name": "Ada"}}}

    async def answers(self, requests: Any) -> dict[str, Any]:
        self.heard.append(("inputRequests", requests))
        return {key: {"action": "accept", "content": {"name": "Ada"}} for key in requests}


def _event(message: dict[str, Any]) -> bytes:
    return b"event: message\r\ndata: " + json.dumps(message).encode() + b"\r\n\r\n"


class Upstream:
    def __init__(self) -> None:
        self.received: list[tuple[dict[str, str], dict[str, Any]]] = []
        self.replies: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    async def handle(self, request: web.Request) -> web.StreamResponse:
        message = await request.json()
        self.received.append((dict(request.headers), message))
        if "id" in message and "method" not in message:  # our reply to its request
            await self.replies.put(message)
            return web.Response(status=202)
        kind = request.match_info["kind"]
        ident = message["id"]
        if kind == "json":
            return web.json_response({"jsonrpc": "2.0", "id": ident, "result": {"content": [], "ok": True}})
        if kind == "gone":
            return web.json_response({"jsonrpc": "2.0", "id": None,
                                      "error": {"code": -32600, "message": "Session not found"}}, status=404)
        if kind == "invalid":
            return web.json_response({"jsonrpc": "2.0", "id": ident,
                                      "error": {"code": -32602, "message": "Unknown tool: nope"}}, status=400)
        if kind == "big":
            return web.json_response({"jsonrpc": "2.0", "id": ident, "result": {"x": "y" * 5000}})
        if kind == "html":
            return web.Response(text="<html/>", content_type="text/html")
        if kind == "modern":
            params = message["params"]
            if "inputResponses" not in params:
                return web.json_response({"jsonrpc": "2.0", "id": ident, "result": {
                    "resultType": "input_required", "requestState": "s1",
                    "inputRequests": {"who": {"method": "elicitation/create", "params": {"message": "?"}}}}})
            return web.json_response({"jsonrpc": "2.0", "id": ident, "result": {
                "content": [], "answers": params["inputResponses"], "state": params["requestState"]}})
        # sse: a comment, progress split across writes, a log, a request of ours, then the result
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(b": keep-alive\n\n")
        token = message["params"]["_meta"]["progressToken"]
        progress = _event({"jsonrpc": "2.0", "method": "notifications/progress",
                           "params": {"progressToken": token, "progress": 1, "total": 2}})
        await response.write(progress[:17])
        await response.write(progress[17:])
        await response.write(b"event: other\ndata: {}\n\n")  # not a message event: skipped
        await response.write(_event({"jsonrpc": "2.0", "method": "notifications/message",
                                     "params": {"level": "info", "data": "working"}}))
        await response.write(_event({"jsonrpc": "2.0", "id": "ask-1", "method": "elicitation/create",
                                     "params": {"message": "name?"}}))
        reply = await asyncio.wait_for(self.replies.get(), 5)
        # The result's JSON split over two data lines (joined with a newline: still JSON).
        await response.write(b'data: {"jsonrpc": "2.0", "id": %d,\ndata: "result": {"reply": %s}}\n\n'
                             % (ident, json.dumps(reply).encode()))
        return response


@pytest.fixture
async def upstream() -> AsyncIterator[tuple[Upstream, str]]:
    state = Upstream()
    app = web.Application()
    app.router.add_post("/{kind}", state.handle)
    runner = web.AppRunner(app)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    try:
        yield state, f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


def _channel(http: aiohttp.ClientSession, url: str, version: str = "2025-11-25",
             session_id: str | None = "s-1") -> Channel:
    return Channel(url, http, version, session_id, {"name": "t", "version": "1"},
                   {"Authorization": "Bearer tok"}, limit=1000)


def test_events_are_framed_across_chunks_with_lf_or_crlf() -> None:
    parser = stream.SseParser(limit=100)
    assert parser.feed(b"data: a\r") == []
    assert parser.feed(b"\ndata: b\n") == []
    # A comment, an event of another name, a priming event (an id, no data): none is a message.
    rest = b"\r\n: comment\nevent: ping\ndata: x\n\nid: 7\ndata:\n\ndata:c\n\n"
    assert parser.feed(rest) == [b"a\nb", b"c"]
    with pytest.raises(stream.TooLarge):
        stream.SseParser(limit=10).feed(b"data: " + b"z" * 20)


@override_settings(REGISTRY_HTTP_ALLOWED_HOSTS=["127.0.0.1"])
async def test_a_json_answer_carries_the_2025_session_headers(upstream: tuple[Upstream, str],
                                                              http: aiohttp.ClientSession) -> None:
    state, url = upstream
    channel, relay = _channel(http, f"{url}/json"), Recording()
    result = await channel.request("tools/call", {"name": "t", "arguments": {}}, relay)
    assert result == {"content": [], "ok": True}
    headers, message = state.received[0]
    assert headers["Mcp-Session-Id"] == "s-1" and headers["MCP-Protocol-Version"] == "2025-11-25"
    assert headers["Authorization"] == "Bearer tok"
    token = message["params"]["_meta"]["progressToken"]
    assert message["params"] == {"name": "t", "arguments": {}, "_meta": {"progressToken": token}}
    assert token != "p" and token == relay.progress_token  # one of the channel's, unique to the call


@override_settings(REGISTRY_HTTP_ALLOWED_HOSTS=["127.0.0.1"])
async def test_an_sse_answer_relays_what_comes_before_the_result(upstream: tuple[Upstream, str],
                                                                 http: aiohttp.ClientSession) -> None:
    state, url = upstream
    relay = Recording()
    result = await _channel(http, f"{url}/sse").request("tools/call", {"name": "t", "arguments": {}}, relay)
    assert relay.heard == [
        ("notifications/progress", {"progressToken": relay.progress_token, "progress": 1, "total": 2}),
        ("notifications/message", {"level": "info", "data": "working"}),
        ("elicitation/create", {"message": "name?"}),
    ]
    # Our reply went back to the upstream on the session, under its request's id.
    assert result["reply"] == {"jsonrpc": "2.0", "id": "ask-1",
                               "result": {"action": "accept", "content": {"name": "Ada"}}}
    assert state.received[-1][0]["Mcp-Session-Id"] == "s-1"


@override_settings(REGISTRY_HTTP_ALLOWED_HOSTS=["127.0.0.1"])
async def test_a_2026_upstream_gets_the_stateless_shape_and_its_questions_answered(
        upstream: tuple[Upstream, str], http: aiohttp.ClientSession) -> None:
    state, url = upstream
    relay = Recording({"elicitation": {}})
    channel = _channel(http, f"{url}/modern", version="2026-07-28", session_id=None)
    result = await channel.request("tools/call", {"name": "ask me", "arguments": {}}, relay)
    assert result == {"content": [], "answers": {"who": {"action": "accept", "content": {"name": "Ada"}}},
                      "state": "s1"}
    first_headers, first = state.received[0]
    assert "Mcp-Session-Id" not in first_headers
    assert first_headers["Mcp-Method"] == "tools/call"
    assert first_headers["MCP-Protocol-Version"] == "2026-07-28"
    assert first_headers["Mcp-Name"] == "ask me"
    meta = first["params"]["_meta"]
    assert meta["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
    assert meta["io.modelcontextprotocol/clientCapabilities"] == {"elicitation": {}}
    asked = {"who": {"method": "elicitation/create", "params": {"message": "?"}}}
    assert relay.heard == [("inputRequests", asked)]


@override_settings(REGISTRY_HTTP_ALLOWED_HOSTS=["127.0.0.1"])
async def test_each_failure_is_told_apart(upstream: tuple[Upstream, str],
                                          http: aiohttp.ClientSession) -> None:
    _, url = upstream
    params = {"name": "t", "arguments": {}}
    with pytest.raises(Expired):
        await _channel(http, f"{url}/gone").request("tools/call", params, Recording())
    with pytest.raises(RpcError) as invalid:
        await _channel(http, f"{url}/invalid").request("tools/call", params, Recording())
    assert (invalid.value.code, invalid.value.message) == (-32602, "Unknown tool: nope")
    with pytest.raises(stream.TooLarge):
        await _channel(http, f"{url}/big").request("tools/call", params, Recording())
    with pytest.raises(stream.Malformed, match="text/html"):
        await _channel(http, f"{url}/html").request("tools/call", params, Recording())
