"""The listen stream of a handshake-era upstream (2025-06-18, Streamable HTTP): the GET stream
(``registry/upstreams/listen.py``). A raw aiohttp server on loopback speaks just enough of it:

- ``/mcp``: announces ``tools.listChanged``, answers the GET with an SSE stream carrying one
  ``notifications/tools/list_changed``, and answers ``ping`` until the test expires the session
  (404, as a restarted server does): the hold then ends, for the keeper to reconnect;
- ``/no-get/mcp``: answers the GET 405 Method Not Allowed (basic/transports: a server without the
  stream): ``NoListenStream``;
- ``/quiet/mcp``: announces no ``listChanged`` at all: ``NoListenStream`` without a GET.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from aiohttp import web
from django.test import override_settings

from registry.upstreams.config import UpstreamConfig
from registry.upstreams.listen import NoListenStream, hold
from tests.support.ports import free_port

pytestmark = pytest.mark.timeout(60)
LIST_CHANGED = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}


@dataclass
class Upstream:
    url: str
    expired: threading.Event = field(default_factory=threading.Event)
    gets: list[str] = field(default_factory=list)


def _app(state: Upstream) -> web.Application:
    async def mcp(request: web.Request) -> web.StreamResponse:
        kind = request.match_info.get("kind", "")
        if request.method == "GET":
            state.gets.append(kind)
            if kind == "no-get":
                return web.Response(status=405)
            stream = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
            await stream.prepare(request)
            await stream.write(f"event: message\ndata: {json.dumps(LIST_CHANGED)}\n\n".encode())
            await asyncio.to_thread(state.expired.wait, 30)  # open until the session expires
            return stream
        if request.method == "DELETE":
            return web.Response(status=200)
        message = await request.json()
        if "id" not in message:
            return web.Response(status=202)
        if state.expired.is_set():
            return web.Response(status=404)
        method = message.get("method")
        result: dict[str, Any] | None = None
        if method == "initialize":
            tools = {} if kind == "quiet" else {"listChanged": True}
            result = {"protocolVersion": "2025-06-18", "capabilities": {"tools": tools},
                      "serverInfo": {"name": "handshake", "version": "0"}}
        elif method == "ping":
            result = {}
        body: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
        if result is None:
            body["error"] = {"code": -32601, "message": "Method not found"}
        else:
            body["result"] = result
        return web.json_response(body, headers={"Mcp-Session-Id": "handshake-session"})

    app = web.Application()
    app.router.add_route("*", "/mcp", mcp)
    app.router.add_route("*", "/{kind}/mcp", mcp)
    return app


@pytest.fixture
def upstream() -> Iterator[Upstream]:
    loop = asyncio.new_event_loop()
    port = free_port()
    state = Upstream(f"http://127.0.0.1:{port}")
    runner = web.AppRunner(_app(state))
    loop.run_until_complete(runner.setup())
    loop.run_until_complete(web.TCPSite(runner, "127.0.0.1", port).start())
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    with override_settings(REGISTRY_HTTP_ALLOWED_HOSTS=["127.0.0.1"]):
        yield state
    state.expired.set()
    asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(10)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(5)


def _config(url: str) -> UpstreamConfig:
    return UpstreamConfig(id=1, name="handshake", prefix="hs", url=url, transport="streamable-http",
                          auth="none", timeout=2.0, connect_timeout=2.0)


async def test_the_get_streams_list_changed_is_heard_and_an_expired_session_ends_the_hold(
    upstream: Upstream,
) -> None:
    heard: list[str] = []
    got_tools = asyncio.Event()

    def changed(kind: str) -> None:
        heard.append(kind)
        if kind == "tools":
            got_tools.set()

    holding = asyncio.create_task(hold(_config(f"{upstream.url}/mcp"), changed, probe=0.2))
    await asyncio.wait_for(got_tools.wait(), 10)
    assert heard[0] == "reconnected" and "tools" in heard
    assert not holding.done()  # pings answered: the stream is held
    upstream.expired.set()  # the upstream forgot the session (restarted): pings are answered 404
    why = await asyncio.wait_for(holding, 10)
    assert why.startswith("the session ended")


async def test_an_upstream_answering_the_get_405_has_no_listen_stream(upstream: Upstream) -> None:
    with pytest.raises(NoListenStream, match="405"):
        await asyncio.wait_for(hold(_config(f"{upstream.url}/no-get/mcp"), lambda kind: None, probe=5.0), 10)
    assert upstream.gets == ["no-get"]


async def test_an_upstream_announcing_no_list_changes_is_not_listened_to(upstream: Upstream) -> None:
    with pytest.raises(NoListenStream, match="listChanged"):
        await asyncio.wait_for(hold(_config(f"{upstream.url}/quiet/mcp"), lambda kind: None), 10)
