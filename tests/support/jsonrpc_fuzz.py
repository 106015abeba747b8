"""Hostile JSON-RPC input for the fuzz tests (hypothesis strategies) and what every reply to it must
be: bodies (random bytes, mangled JSON texts, well-formed messages of every method of every
revision with params of any shape and ids of any type) and header sets; ``check_reply`` holds a
reply to the rules (never a 500, every body a JSON-RPC message, an error echoes a readable id).
Used in-process (``tests/faults/test_fuzz_jsonrpc.py``) and over loopback
(``test_fuzz_live_server.py``)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

from mcp_protocol.method_table import LEGACY_METHODS, MODERN_METHODS

from .asgi_call import Reply

VERSIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"]
METHODS = sorted({*LEGACY_METHODS, *MODERN_METHODS, "notifications/cancelled", "notifications/initialized",
                  "sampling/createMessage", "nope"})
MEMBERS = ["name", "arguments", "uri", "cursor", "_meta", "level", "ref", "argument", "context",
           "protocolVersion", "capabilities", "clientInfo", "task", "progressToken", "requestId",
           "io.modelcontextprotocol/protocolVersion", "io.modelcontextprotocol/clientCapabilities"]

# JSON values, including strings with any code point a JSON text can carry: lone surrogates too
# (json.dumps writes them as \udXXX escapes, the hostile form).
texts = st.text(st.characters(exclude_categories=[]), max_size=12) | st.sampled_from(
    ["\ud800", "a\udfffb", "\udc00\ud800", "\x00", "\u2028", "\ufeff"])
scalars = st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(
    allow_infinity=False) | texts | st.sampled_from(VERSIONS + METHODS + MEMBERS)
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(st.sampled_from(MEMBERS) | texts, inner, max_size=4),
                      max_leaves=12)
ids = st.integers(-(2**64), 2**64) | texts | st.none() | st.booleans() | st.floats(allow_nan=False)


@st.composite
def messages(draw: st.DrawFn) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": draw(st.sampled_from(["2.0", "2.0", "2.0", "1.0"]))}
    if draw(st.booleans()):
        message["id"] = draw(ids)
    message["method"] = draw(st.sampled_from(METHODS))
    if draw(st.integers(0, 9)):
        params = draw(st.dictionaries(st.sampled_from(MEMBERS), values, max_size=5))
        if draw(st.booleans()):
            params["_meta"] = draw(st.dictionaries(st.sampled_from(MEMBERS), values, max_size=3)
                                   | st.fixed_dictionaries({
                                       "io.modelcontextprotocol/protocolVersion": st.sampled_from(VERSIONS),
                                       "io.modelcontextprotocol/clientCapabilities": values,
                                       "progressToken": values}))
        message["params"] = params
    if not draw(st.integers(0, 15)):
        message[draw(st.sampled_from(["result", "error"]))] = draw(values)
    return message


def mangle(text: str, cut: int, insert: str) -> bytes:
    cut = cut % (len(text) + 1)
    return (text[:cut] + insert + text[cut:]).encode("utf-8", "surrogatepass")


INSERTS = ['"\\ud800"', "\\udfff", "\\u0000", "\x00", "NaN", "1e999", "[", "}", ",", '"', "\\", "\ud800"]
bodies = (
    messages().map(lambda m: json.dumps(m).encode())
    | st.builds(mangle, messages().map(json.dumps), st.integers(0, 400), st.sampled_from(INSERTS))
    | st.binary(max_size=64)
    | st.lists(messages(), max_size=3).map(lambda m: json.dumps(m).encode())
)
header_sets = st.fixed_dictionaries({}, optional={
    b"mcp-protocol-version": st.sampled_from([v.encode() for v in VERSIONS] + [b"", b"x", b"\xff"]),
    b"mcp-method": st.sampled_from([m.encode() for m in METHODS] + [b"\xff\xfe"]),
    b"mcp-name": st.binary(max_size=8),
    b"last-event-id": st.binary(max_size=12),
    b"accept": st.sampled_from([b"*/*", b"application/json", b"text/event-stream", b"\xff"]),
    b"content-type": st.sampled_from([b"application/json", b"text/plain", b"application/json; q=\xff"]),
})


def readable_id(body: bytes) -> Any:
    """The request id a reply should echo, or ``...`` when there is none to expect."""
    try:
        obj = json.loads(body.decode("utf-8"))
        json.dumps(obj).encode("utf-8")  # no lone surrogates
    except (ValueError, UnicodeError):
        return ...
    if not isinstance(obj, dict) or obj.get("jsonrpc") != "2.0" or not isinstance(obj.get("method"), str):
        return ...
    request_id = obj.get("id")
    if isinstance(request_id, bool) or not isinstance(request_id, str | int):
        return ...
    return request_id


def check_reply(reply: Reply, body: bytes, *, id_expected: bool) -> None:
    assert (reply.status != 500 and reply.status < 500) or reply.status == 503, (reply.status, body[:300])
    if not reply.body:
        return
    for message in reply.messages():
        items = message if isinstance(message, list) else [message]
        for item in items:
            assert item.get("jsonrpc") == "2.0", item
            assert "result" in item or "error" in item or "method" in item, item
    expected = readable_id(body)
    if expected is not ... and reply.headers.get(b"content-type", b"").startswith(b"application/json"):
        answer = reply.json()
        if isinstance(answer, dict) and "error" in answer:
            # A JSON-RPC error answers the request it read (an HTTP-level refusal before the body
            # was read, 406 or 415, has no id to give).
            if answer["id"] is not None or (id_expected and reply.status == 200):
                assert answer["id"] == expected, (body[:300], answer)


PING = b'{"jsonrpc":"2.0","id":"b","method":"ping"}'
