"""A minimal MCP server as a fast loopback upstream (issue 40's call bench): a hand-written ASGI
app speaking just enough 2025-11-25 Streamable HTTP (JSON responses) to be connected to and called,
so the proxied/handler ratio is not capped by the upstream (the official SDK's server answers
fewer calls per second than our own handler tool: bench/results/2026-11-28-1440-upstream-calls.md).

``initialize`` (a session id), notifications (202), ``ping``, ``tools/list`` (one tool ``echo``),
``tools/call echo`` (its ``text`` back); anything else, ``server/discover`` included, a -32601
error (so a client falls back to the handshake). Served by uvicorn like ours (``bench_upstream_calls.py``
starts it). Not a test, not served anywhere but the bench.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from bench.apps.minimal import lifespan, read_body

VERSION = "2025-11-25"
SESSION = uuid.uuid4().hex
JSON_HEADERS = [(b"content-type", b"application/json"), (b"mcp-session-id", SESSION.encode())]
ECHO = {"name": "echo", "description": "Echo the text back.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}}


def _answer(message: dict[str, Any]) -> dict[str, Any]:
    method, params = message.get("method"), message.get("params") or {}
    if method == "initialize":
        return {"result": {"protocolVersion": VERSION, "capabilities": {"tools": {}},
                           "serverInfo": {"name": "bench-mcp-upstream", "version": "1"}}}
    if method == "ping":
        return {"result": {}}
    if method == "tools/list":
        return {"result": {"tools": [ECHO]}}
    if method == "tools/call" and params.get("name") == "echo":
        text = str((params.get("arguments") or {}).get("text", ""))
        return {"result": {"content": [{"type": "text", "text": text}], "isError": False}}
    return {"error": {"code": -32601, "message": f"Method not found: {method}"}}


async def application(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "lifespan":
        await lifespan(receive, send)
        return
    body = await read_body(receive)
    if scope["method"] != "POST":
        await send({"type": "http.response.start", "status": 405, "headers": []})
        await send({"type": "http.response.body", "body": b""})
        return
    message = json.loads(body)
    if "id" not in message:
        await send({"type": "http.response.start", "status": 202, "headers": []})
        await send({"type": "http.response.body", "body": b""})
        return
    reply = json.dumps({"jsonrpc": "2.0", "id": message["id"], **_answer(message)}).encode()
    await send({"type": "http.response.start", "status": 200, "headers": JSON_HEADERS})
    await send({"type": "http.response.body", "body": reply})
