"""SSE framing (sse.py) and the one exception → wire error mapping (responses.py)."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_protocol.errors import InvalidParams, ParseError
from mcp_protocol.store_errors import SessionLimitReached, StoreUnavailable, UnknownEvent
from mcp_protocol.transports import sse
from mcp_protocol.transports.responses import HTTPError, modern_status, send_error, wire_error


def test_frame_priming_and_retry_bytes() -> None:
    assert sse.frame(b'{"a":1}', "s.3") == b'event: message\nid: s.3\ndata: {"a":1}\n\n'
    assert sse.frame(b"{}") == b"event: message\ndata: {}\n\n"
    assert sse.priming("s.1", 500) == b"id: s.1\nretry: 500\ndata: \n\n"
    assert sse.retry(1000) == b"retry: 1000\n\n"
    assert sse.KEEPALIVE.startswith(b":") and sse.KEEPALIVE.endswith(b"\n\n")


async def test_writer_drops_writes_after_close_and_ends_the_body_once() -> None:
    sent: list[dict[str, Any]] = []

    async def send(message: Any) -> None:
        sent.append(message)

    writer = sse.SSEWriter(send)
    await writer.start()
    assert await writer.write(b"x")
    await writer.close(250)
    await writer.close()
    assert not await writer.write(b"y")
    assert sent[0]["headers"][0] == (b"content-type", b"text/event-stream")
    assert (b"x-accel-buffering", b"no") in sent[0]["headers"] and (b"cache-control", b"no-cache") in sent[0][
        "headers"
    ]
    assert [m.get("body") for m in sent[1:]] == [b"x", b"retry: 250\n\n"]
    assert sent[-1]["more_body"] is False


async def test_writer_treats_a_failing_send_as_a_gone_client() -> None:
    async def send(message: Any) -> None:
        if message["type"] == "http.response.body":
            raise OSError("client disconnected")

    writer = sse.SSEWriter(send)
    await writer.start()
    assert not await writer.write(b"x")
    assert writer.closed


@pytest.mark.parametrize(
    ("exc", "status", "code"),
    [
        (HTTPError(404, "Session not found"), 404, -32600),
        (ParseError(), 400, -32700),
        (InvalidParams("bad"), 400, -32602),
        (SessionLimitReached("full", 3), 503, -32000),
        (UnknownEvent("gone"), 400, -32600),
        (StoreUnavailable("down"), 503, -32603),
        (RuntimeError("secret detail"), 500, -32603),
    ],
)
def test_wire_error_maps_each_exception_once(exc: Exception, status: int, code: int) -> None:
    got_status, error, _ = wire_error(exc)
    assert (got_status, error["code"]) == (status, code)
    assert "secret detail" not in error["message"]


async def test_send_error_writes_a_jsonrpc_body_without_id() -> None:
    sent: list[dict[str, Any]] = []

    async def send(message: Any) -> None:
        sent.append(message)

    await send_error(send, HTTPError(409, "Conflict", headers=[(b"x-a", b"1")]))
    assert sent[0]["status"] == 409 and (b"x-a", b"1") in sent[0]["headers"]
    assert sent[1]["body"] == b'{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Conflict"}}'


def test_modern_status_table() -> None:
    assert modern_status({"result": {}}) == 200
    assert modern_status({"error": {"code": -32601}}) == 404
    assert modern_status({"error": {"code": -32020}}) == 400
    assert modern_status({"error": {"code": -32603}}) == 200
    assert modern_status(None) == 200
