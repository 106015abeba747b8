"""The floor for ``/mcp`` in CPython: the least a conforming server does for a session tools/call.

``bench/apps/bare.py`` is the ceiling: it answers recorded bytes and does no protocol work at all.
This app does the protocol work no Streamable HTTP server may skip, written straight into one
function with no framework, no stores, no auth seam, no task per request: so its CPU per call over
the bare app's is what any Python implementation pays at least, and issue 16's "ours / bare" target
can be read against it (``run_all.py`` prints ``floor / bare`` beside ``open / bare``).

Per request, as the spec asks (2025-11-25, basic/transports "Streamable HTTP" and "Security
Warning"; basic/lifecycle; server/tools "Calling Tools" and "Security Considerations"):

- the ``Origin`` header, when present, is checked, and ``Host`` against the allowed names (DNS
  rebinding);
- ``Accept`` must list both ``application/json`` and ``text/event-stream``, ``Content-Type`` must
  be JSON, ``MCP-Protocol-Version`` must be a negotiated revision, ``Mcp-Session-Id`` must name a
  live session (404 if not);
- the body is parsed as JSON-RPC 2.0 (``jsonrpc``, an id of the right type, a method, object params);
- the tool is looked up and its arguments validated against its input schema (here a check written
  by hand for ``echo``'s schema: cheaper than any general JSON Schema validator, so still a floor);
- the result is built as a ``CallToolResult`` and serialized once.

What it leaves out that a real server needs is the point of the comparison: cancellation
(``notifications/cancelled`` needs the call to run as a task), session state in a store other
workers can read, SSE replies, resumability, auth, audit, metrics, list_changed, pagination, every
other method. Not a test, not served anywhere but the bench.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from bench.apps.minimal import lifespan, read_body

VERSIONS = frozenset({"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"})
HOSTS = frozenset({b"127.0.0.1", b"localhost"})
ORIGINS = frozenset({b"http://127.0.0.1", b"http://localhost"})
JSON_HEADERS = [(b"content-type", b"application/json")]
SESSIONS: dict[str, str] = {}  # session id -> negotiated revision
CAPABILITIES = {"tools": {"listChanged": True}}
INFO = {"name": "floor", "version": "0"}


async def _answer(send: Any, status: int, headers: list[tuple[bytes, bytes]], body: bytes) -> None:
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _error(request_id: Any, code: int, message: str) -> bytes:
    return json.dumps(
        {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
    ).encode()


def _host_allowed(value: bytes) -> bool:
    name = value.rsplit(b":", 1)[0] if value.count(b":") == 1 else value
    return name in HOSTS


def _origin_allowed(value: bytes) -> bool:
    scheme_host, _, port = value.rpartition(b":")
    return (scheme_host if port.isdigit() else value) in ORIGINS


async def application(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "lifespan":
        return await lifespan(receive, send)
    body = await read_body(receive)
    headers = dict(scope["headers"])
    origin = headers.get(b"origin")
    if not _host_allowed(headers.get(b"host", b"")) or (origin is not None and not _origin_allowed(origin)):
        return await _answer(send, 403, JSON_HEADERS, _error(None, -32000, "Forbidden"))
    session = headers.get(b"mcp-session-id", b"").decode("latin-1")
    if scope["method"] == "DELETE":
        return await _answer(send, 204 if SESSIONS.pop(session, None) else 404, [], b"")
    if scope["method"] != "POST":
        return await _answer(send, 405, [(b"allow", b"POST, DELETE")], b"")
    accept = headers.get(b"accept", b"")
    if b"application/json" not in accept or b"text/event-stream" not in accept:
        return await _answer(send, 406, JSON_HEADERS, _error(None, -32000, "Not Acceptable"))
    if not headers.get(b"content-type", b"").startswith(b"application/json"):
        return await _answer(send, 415, JSON_HEADERS, _error(None, -32000, "Unsupported Media Type"))
    try:
        request = json.loads(body)
    except ValueError:
        return await _answer(send, 400, JSON_HEADERS, _error(None, -32700, "Parse error"))
    if (
        not isinstance(request, dict)
        or request.get("jsonrpc") != "2.0"
        or not isinstance(request.get("method"), str)
    ):
        return await _answer(send, 400, JSON_HEADERS, _error(None, -32600, "Invalid Request"))
    method, params = request["method"], request.get("params", {})
    request_id = request.get("id")
    if not isinstance(params, dict) or (request_id is not None and type(request_id) not in (int, str)):
        return await _answer(send, 400, JSON_HEADERS, _error(request_id, -32600, "Invalid Request"))
    if method == "initialize":
        version = params.get("protocolVersion")
        version = version if version in VERSIONS else "2025-11-25"
        session = uuid.uuid4().hex
        SESSIONS[session] = version
        result = {"protocolVersion": version, "capabilities": CAPABILITIES, "serverInfo": INFO}
        payload = json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}).encode()
        return await _answer(send, 200, [*JSON_HEADERS, (b"mcp-session-id", session.encode())], payload)
    negotiated = SESSIONS.get(session)
    if negotiated is None:
        return await _answer(send, 404, JSON_HEADERS, _error(request_id, -32001, "Session not found"))
    version = headers.get(b"mcp-protocol-version")
    if version is not None and version.decode("latin-1") != negotiated:
        return await _answer(send, 400, JSON_HEADERS, _error(request_id, -32600, "Bad MCP-Protocol-Version"))
    if request_id is None:  # a notification
        return await _answer(send, 202, [], b"")
    if method != "tools/call":
        return await _answer(send, 200, JSON_HEADERS, _error(request_id, -32601, "Method not found"))
    name, arguments = params.get("name"), params.get("arguments", {})
    if name != "echo":
        return await _answer(send, 200, JSON_HEADERS, _error(request_id, -32602, f"Unknown tool: {name}"))
    if not isinstance(arguments, dict) or not isinstance(arguments.get("message"), str):
        return await _answer(send, 200, JSON_HEADERS, _error(request_id, -32602, "Invalid arguments"))
    result = {"content": [{"type": "text", "text": arguments["message"]}], "isError": False}
    await _answer(
        send, 200, JSON_HEADERS, json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}).encode()
    )
