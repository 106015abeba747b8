"""Hostile bytes and malformed request shapes on ``/mcp`` never reach a 500 and get the error the
spec names: not UTF-8, lone surrogate escapes, NaN / out-of-range numbers → 400 with -32700 at the
edge; a request carrying ``result`` → -32600; params of the wrong type for their revision's schema
(``_meta``, ``progressToken``, ``cursor: null``, every typed member) → -32602 with the request's id.
In-process through the real endpoint (one-shot POSTs: statuses and bodies, no streaming)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from mcp_protocol.transports import runtime
from mcp_protocol.transports.http import MCPEndpoint
from tests.support.asgi_call import MEMORY_MCP, call, open_session

LEGACY = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


@pytest.fixture
async def endpoint(settings: Any) -> AsyncIterator[MCPEndpoint]:
    settings.MCP = MEMORY_MCP
    yield MCPEndpoint()
    await runtime.shutdown()


def request(method: str, params: Any = None, id: Any = 1) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode()


# -- bytes the parser must refuse ------------------------------------------------------------------
SURROGATE = '"\\ud800"'
HOSTILE_BODIES = {
    "lone surrogate in the id": b'{"jsonrpc":"2.0","id":' + SURROGATE.encode() + b',"method":"ping"}',
    "lone surrogate in the method": b'{"jsonrpc":"2.0","id":1,"method":' + SURROGATE.encode() + b"}",
    "lone low surrogate in a tool name": (
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"\\udc00x"}}'),
    "lone surrogate in a uri": (
        b'{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"demo://\\uDBFF"}}'),
    "lone surrogate in an echoed argument": (
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call",'
        b'"params":{"name":"echo","arguments":{"message":"a\\ud800b"}}}'),
    "lone surrogate as an object key": b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"\\ud800":1}}',
    "reversed surrogate pair": b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"\\udc00\\ud800"}}',
    "invalid UTF-8 byte": b'{"jsonrpc":"2.0","id":1,"method":"\xff"}',
    "truncated UTF-8 sequence": b'{"jsonrpc":"2.0","id":1,"method":"\xe2\x82"}',
    "overlong UTF-8 encoding": b'{"jsonrpc":"2.0","id":1,"method":"\xc0\xaf"}',
    "UTF-8-encoded surrogate": b'{"jsonrpc":"2.0","id":1,"method":"\xed\xa0\x80"}',
    "Latin-1 body": '{"jsonrpc":"2.0","id":1,"method":"pïng"}'.encode("latin-1"),
    "UTF-16 body": '{"jsonrpc":"2.0","id":1,"method":"ping"}'.encode("utf-16"),
    "NaN": b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":NaN}}',
    "Infinity": b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":-Infinity}}',
    "number beyond a double": b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":1e400}}',
    "integer of 5000 digits": b'{"jsonrpc":"2.0","id":1' + b"0" * 5000 + b',"method":"ping"}',
    "nesting 100000 deep": b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":' + b"[" * 100000 + b"}}",
    "NUL byte": b'{"jsonrpc":"2.0","id":1,"method":"ping"}\x00',
    "empty body": b"",
    "BOM then JSON": b'\xef\xbb\xbf{"jsonrpc":"2.0","id":1,"method":"ping"}',
}


@pytest.mark.parametrize("body", HOSTILE_BODIES.values(), ids=HOSTILE_BODIES.keys())
async def test_bytes_that_are_not_unicode_json_are_a_parse_error_before_any_handler(
    endpoint: MCPEndpoint, body: bytes
) -> None:
    headers = await open_session(endpoint)
    reply = await call(endpoint, body, headers)
    assert reply.status == 400, f"status {reply.status}: {reply.body[:200]!r}"
    assert reply.json() == {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}
    # And the session keeps answering.
    assert (await call(endpoint, request("ping", id=2), headers)).json()["result"] == {}


async def test_a_valid_surrogate_pair_is_one_character_and_is_echoed_intact(endpoint: MCPEndpoint) -> None:
    headers = await open_session(endpoint)
    body = (b'{"jsonrpc":"2.0","id":"\\ud83d\\ude00","method":"tools/call",'
            b'"params":{"name":"echo","arguments":{"message":"\\ud83d\\ude00"}}}')
    reply = await call(endpoint, body, headers)
    assert reply.status == 200 and reply.json()["id"] == "\U0001f600"
    assert "\U0001f600" in reply.json()["result"]["content"][0]["text"]


async def test_an_initialize_with_hostile_bytes_creates_no_session(endpoint: MCPEndpoint) -> None:
    body = (b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",'
            b'"capabilities":{},"clientInfo":{"name":"\\ud800","version":"1"}}}')
    reply = await call(endpoint, body)
    assert reply.status == 400 and b"mcp-session-id" not in reply.headers
    assert reply.json()["error"]["code"] == -32700


# -- malformed request objects: -32600 -------------------------------------------------------------
@pytest.mark.parametrize("member", ["result", "error"])
async def test_a_request_carrying_a_result_or_error_member_is_an_invalid_request(
    endpoint: MCPEndpoint, member: str
) -> None:
    headers = await open_session(endpoint)
    body = json.dumps({"jsonrpc": "2.0", "id": 9, "method": "ping", member: {}}).encode()
    reply = await call(endpoint, body, headers)
    assert reply.status == 400
    assert reply.json()["id"] == 9 and reply.json()["error"]["code"] == -32600


# -- params of the wrong type: -32602 with the request's id ---------------------------------------
ARG = {"name": "a", "value": ""}
PROMPT_REF = {"type": "ref/prompt", "name": "greet"}
WRONG_PARAMS: list[tuple[str, dict[str, Any], str | None]] = [
    ("ping", {"_meta": "x"}, None),
    ("ping", {"_meta": []}, None),
    ("ping", {"_meta": None}, None),
    ("tools/list", {"_meta": {"progressToken": {"a": 1}}}, None),
    ("tools/list", {"_meta": {"progressToken": True}}, None),
    ("tools/list", {"_meta": {"progressToken": 1.5}}, None),
    ("tools/list", {"_meta": {"progressToken": None}}, None),
    ("tools/list", {"cursor": None}, None),
    ("tools/list", {"cursor": 5}, None),
    ("resources/list", {"cursor": None}, None),
    ("resources/templates/list", {"cursor": []}, None),
    ("prompts/list", {"cursor": {}}, None),
    ("tools/call", {"name": 5}, None),
    ("tools/call", {"name": "echo", "arguments": [1]}, None),
    ("tools/call", {"name": "echo", "arguments": "message"}, None),
    ("resources/read", {"uri": 5}, None),
    ("resources/read", {}, None),
    ("resources/subscribe", {"uri": None}, None),
    ("resources/unsubscribe", {"uri": ["demo://readme"]}, None),
    ("prompts/get", {"name": None}, None),
    ("prompts/get", {"name": "greet", "arguments": {"name": 5}}, None),
    ("prompts/get", {"name": "greet", "arguments": "x"}, None),
    ("logging/setLevel", {"level": 3}, None),
    ("completion/complete", {"ref": "ref/prompt", "argument": ARG}, None),
    ("completion/complete", {"ref": {"type": 1, "name": "greet"}, "argument": ARG}, None),
    ("completion/complete", {"ref": {"type": "ref/prompt", "name": 2}, "argument": ARG}, None),
    ("completion/complete", {"ref": PROMPT_REF, "argument": []}, None),
    ("completion/complete", {"ref": PROMPT_REF, "argument": {"name": "a", "value": 1}}, None),
    ("completion/complete", {"ref": PROMPT_REF, "argument": ARG, "context": "x"}, "2025-06-18"),
    ("completion/complete", {"ref": PROMPT_REF, "argument": ARG, "context": {"arguments": {"a": 1}}},
     "2025-06-18"),
]


@pytest.mark.parametrize("version", LEGACY)
@pytest.mark.parametrize(("method", "params", "since"), WRONG_PARAMS,
                         ids=[f"{m}-{json.dumps(p)[:60]}" for m, p, _ in WRONG_PARAMS])
async def test_params_of_the_wrong_type_are_invalid_params_in_every_legacy_revision(
    endpoint: MCPEndpoint, version: str, method: str, params: dict[str, Any], since: str | None
) -> None:
    if since is not None and version < since:
        pytest.skip(f"{method} has no such member before {since}")
    headers = await open_session(endpoint, version)
    reply = await call(endpoint, request(method, params, id="r-1"), headers)
    assert reply.status == 200, reply.body
    body = reply.json()
    assert body["id"] == "r-1" and body["error"]["code"] == -32602, body


@pytest.mark.parametrize(("method", "params", "since"), [w for w in WRONG_PARAMS
                                                          if w[0] not in ("ping", "logging/setLevel",
                                                                          "resources/subscribe",
                                                                          "resources/unsubscribe")
                                                          and "_meta" not in w[1]])
async def test_params_of_the_wrong_type_are_invalid_params_in_2026(
    endpoint: MCPEndpoint, method: str, params: dict[str, Any], since: str | None
) -> None:
    reply = await call(endpoint, request(method, {**params, "_meta": MODERN_META}, id=7), [
        (b"host", b"127.0.0.1"), (b"accept", b"application/json, text/event-stream"),
        (b"content-type", b"application/json"), (b"mcp-protocol-version", b"2026-07-28"),
        (b"mcp-method", method.encode()),
        *([(b"mcp-name", str(params.get("name") or params.get("uri") or "").encode())]
          if method in ("tools/call", "prompts/get", "resources/read") else []),
    ])
    body = reply.json()
    assert reply.status != 500 and body["id"] == 7, body
    assert body["error"]["code"] in (-32602, -32020), body  # -32020: header and body disagree first
    if body["error"]["code"] == -32602:
        assert reply.status == 400


async def test_a_2026_progress_token_of_the_wrong_type_is_invalid_params(endpoint: MCPEndpoint) -> None:
    meta = {**MODERN_META, "progressToken": {"nested": True}}
    reply = await call(endpoint, request("tools/list", {"_meta": meta}, id=3), [
        (b"host", b"127.0.0.1"), (b"accept", b"application/json, text/event-stream"),
        (b"content-type", b"application/json"), (b"mcp-protocol-version", b"2026-07-28"),
        (b"mcp-method", b"tools/list"),
    ])
    assert reply.status == 400 and reply.json()["error"]["code"] == -32602 and reply.json()["id"] == 3


async def test_well_typed_params_still_work_including_null_arguments(endpoint: MCPEndpoint) -> None:
    headers = await open_session(endpoint)
    for method, params in [
        ("tools/list", {"cursor": None} and {}),
        ("tools/list", {"_meta": {"progressToken": "t"}}),
        ("tools/list", {"_meta": {"progressToken": 7}}),
        ("tools/call", {"name": "list_roots", "arguments": None}),
        ("prompts/get", {"name": "greet", "arguments": {"name": "x"}}),
    ]:
        body = (await call(endpoint, request(method, params), headers)).json()
        assert "error" not in body or body["error"]["code"] != -32602, (method, params, body)


# -- stdio shares the parser -----------------------------------------------------------------------
async def test_stdio_answers_hostile_lines_with_parse_errors_and_keeps_serving() -> None:
    from mcp_protocol.transports.stdio import StdioTransport

    from ..unit.protocol.conftest import make_server

    written: list[bytes] = []
    transport = StdioTransport(make_server(), written.append)
    init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    await transport.feed_line(request("initialize", init, id=0) + b"\n")
    for body in HOSTILE_BODIES.values():
        if b"\n" not in body and body.strip():
            await transport.feed_line(body + b"\n")
    await transport.feed_line(request("tools/list", {"cursor": None}, id="bad-cursor") + b"\n")
    await transport.feed_line(request("ping", id="last") + b"\n")
    await transport.shutdown()
    replies = [json.loads(line) for line in written]  # every line written is JSON: nothing failed
    codes = [r["error"]["code"] for r in replies if "error" in r]
    expected = sum(1 for b in HOSTILE_BODIES.values() if b"\n" not in b and b.strip())
    assert codes.count(-32700) == expected, codes
    assert {"jsonrpc": "2.0", "id": "last", "result": {}} in replies
    assert any(r.get("id") == "bad-cursor" and r["error"]["code"] == -32602 for r in replies if "error" in r)


async def test_an_http_level_error_after_the_body_was_read_carries_the_request_id(
    endpoint: MCPEndpoint,
) -> None:
    headers = await open_session(endpoint)
    unknown = [(k, v) for k, v in headers if k != b"mcp-session-id"] + [(b"mcp-session-id", b"nope")]
    reply = await call(endpoint, request("ping", id="find-me"), unknown)
    assert reply.status == 404 and reply.json()["id"] == "find-me", reply
    mismatch = [(k, v) for k, v in headers if k != b"mcp-protocol-version"]
    mismatch.append((b"mcp-protocol-version", b"2025-06-18"))
    reply = await call(endpoint, request("ping", id=77), mismatch)
    assert reply.status == 400 and reply.json()["id"] == 77, reply
