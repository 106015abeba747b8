"""A hostile upstream MCP server answering our calls (issue 40 item 4): a result that is not the
method's type, a 100 KB error message, a result over the size cap, an answer that never comes.
Each is a bounded ``isError`` result naming the upstream; nothing raises, and a hanging upstream
holds only its own calls. Also: a redirect (to the cloud metadata address) is not followed, an SSE
event over the cap is cut off as it arrives, and a sampling request our caller did not declare it
can answer is refused to the upstream with a JSON-RPC error. The upstream is a raw aiohttp server
on loopback speaking just enough Streamable HTTP (2025-06-18) to be connected to through
``connect()``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from aiohttp import web
from django.test import override_settings

from registry.upstreams.calls import MAX_MESSAGE_CHARS, MAX_RESULT_BYTES
from registry.upstreams.config import UpstreamConfig, UpstreamTarget
from registry.upstreams.pool import UpstreamSessions
from registry.upstreams.serve import call_tool
from tests.support.ports import free_port

pytestmark = pytest.mark.timeout(60)


REPLIES: asyncio.Queue[dict[str, Any]] = asyncio.Queue()


def _answer(message: dict[str, Any]) -> dict[str, Any] | None:
    method, ident = message.get("method"), message.get("id")
    if method == "initialize":
        return {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                "serverInfo": {"name": "hostile", "version": "0"}}
    if method != "tools/call":
        return None
    name = message["params"]["name"]
    if name == "garbage":
        return {"content": "not a list of blocks", "isError": "maybe"}
    if name == "shout":
        raise web.HTTPOk(text=json.dumps({"jsonrpc": "2.0", "id": ident,
                                          "error": {"code": -32000, "message": "A" * 100_000}}),
                         content_type="application/json")
    if name == "flood":
        return {"content": [{"type": "text", "text": "x" * (MAX_RESULT_BYTES + 1)}]}
    return {"content": [{"type": "text", "text": "fine"}]}


async def _mcp(request: web.Request) -> web.StreamResponse:
    if request.method != "POST":
        return web.Response(status=405)
    message = await request.json()
    if "id" not in message:
        return web.Response(status=202)
    if "method" not in message:  # our reply to its request
        await REPLIES.put(message)
        return web.Response(status=202)
    name = message["params"].get("name") if message.get("method") == "tools/call" else None
    if name == "hang":
        await asyncio.sleep(4)  # past our 2 s timeout; ends before the teardown waits for it
    if name == "elsewhere":  # a redirect to another host: not followed
        raise web.HTTPTemporaryRedirect("http://169.254.169.254/latest/meta-data/")
    if name == "stream-flood":  # one SSE event over the cap, never ending its line
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        chunk = b"x" * 65536
        await response.write(b"data: ")
        with contextlib.suppress(ConnectionError):
            for _ in range(MAX_RESULT_BYTES // len(chunk) + 2):
                await response.write(chunk)
        return response
    if name == "ask":  # a sampling request on the call's stream, then the reply it got as the result
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        ask = {"jsonrpc": "2.0", "id": "s1", "method": "sampling/createMessage", "params": {"messages": []}}
        await response.write(b"data: " + json.dumps(ask).encode() + b"\n\n")
        reply = await asyncio.wait_for(REPLIES.get(), 5)
        text = json.dumps(reply)
        result = {"jsonrpc": "2.0", "id": message["id"],
                  "result": {"content": [{"type": "text", "text": text}]}}
        await response.write(b"data: " + json.dumps(result).encode() + b"\n\n")
        return response
    result = _answer(message)
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
    if result is None:
        body["error"] = {"code": -32601, "message": "Method not found"}
    else:
        body["result"] = result
    return web.json_response(body, headers={"Mcp-Session-Id": "hostile-session"})


@pytest.fixture(scope="module")
def hostile() -> Iterator[str]:
    loop = asyncio.new_event_loop()
    port = free_port()
    app = web.Application()
    app.router.add_route("*", "/mcp", _mcp)
    runner = web.AppRunner(app)
    loop.run_until_complete(runner.setup())
    loop.run_until_complete(web.TCPSite(runner, "127.0.0.1", port).start())
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{port}/mcp"
    asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(10)  # ends the hanging handler too
    loop.call_soon_threadsafe(loop.stop)
    thread.join(5)


class Ctx:
    """A caller that declared no client capability (no sampling)."""

    progress_token = None
    client_capabilities: dict[str, Any] = {}


@override_settings(REGISTRY_HTTP_ALLOWED_HOSTS=["127.0.0.1"])
async def test_hostile_answers_are_bounded_errors_naming_the_upstream(hostile: str) -> None:
    config = UpstreamConfig(id=1, name="hostile", prefix="h", url=hostile, transport="streamable-http",
                            auth="none", timeout=2.0, connect_timeout=2.0)
    sessions = UpstreamSessions()
    sessions.open()

    async def call(name: str) -> dict[str, Any]:
        return await call_tool(UpstreamTarget(config, name), {}, Ctx(), sessions)  # type: ignore[arg-type]

    try:
        assert (await call("fine"))["content"][0]["text"] == "fine"
        garbage = await call("garbage")
        assert garbage["isError"] is True
        assert garbage["content"][0]["text"] == "upstream hostile answered with an invalid result"
        shout = await call("shout")
        assert shout["isError"] is True and len(shout["content"][0]["text"]) < MAX_MESSAGE_CHARS + 100
        flood = await call("flood")
        assert flood["isError"] is True and "more than" in flood["content"][0]["text"]
        started = time.perf_counter()
        hang = asyncio.create_task(call("hang"))
        await asyncio.sleep(0.2)
        beside = await call("fine")  # the same upstream, another call: not held by the hanging one
        assert beside["content"][0]["text"] == "fine" and time.perf_counter() - started < 1.0
        elsewhere = await call("elsewhere")
        assert elsewhere["isError"] is True and "redirect" in elsewhere["content"][0]["text"]
        stream_flood = await call("stream-flood")
        assert stream_flood["isError"] is True and "more than" in stream_flood["content"][0]["text"]
        # Its sampling request is refused to it (our caller declared no sampling), not relayed.
        asked = json.loads((await call("ask"))["content"][0]["text"])
        assert asked["id"] == "s1" and asked["error"]["code"] == -32601
        assert "sampling" in asked["error"]["message"]
        hung = await hang
        assert hung["isError"] is True and hung["content"][0]["text"] == (
            "upstream hostile did not answer within 2 s")
    finally:
        await sessions.close()
