"""One HTTP request to an ASGI app in-process: for what a status code and a body show (routing,
the auth seam, hostile input), never for streaming, which only a real server shows.

    reply = await call(endpoint, body, headers)          # raw bytes, the headers as given
    status, headers, body = await post(app, "/mcp")      # a JSON POST (default: initialize)
    headers = await open_session(endpoint)               # what later requests of the session carry

The app's ``receive`` hands over the body, then waits for the response to end before it says
``http.disconnect``; every call is bounded by ``DEADLINE``.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, NamedTuple

DEADLINE = 10.0
Headers = list[tuple[bytes, bytes]]
JSON_POST: Headers = [
    (b"host", b"127.0.0.1"),
    (b"accept", b"application/json, text/event-stream"),
    (b"content-type", b"application/json"),
]
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}
# settings.MCP for an endpoint on memory backends with caps that no test reaches.
MEMORY_MCP = {
    "PROVIDER": {"BACKEND": "mcp_protocol.memory_provider.MemoryProvider", "OPTIONS": {}},
    "SESSION_STORE": {"BACKEND": "mcp_protocol.stores.memory.MemorySessionStore", "OPTIONS": {}},
    "EVENT_STORE": {"BACKEND": "mcp_protocol.stores.memory.MemoryEventStore", "OPTIONS": {}},
    "BUS": {"BACKEND": "mcp_protocol.bus.memory.MemoryBus", "OPTIONS": {}},
    "MAX_SESSIONS": 100000,
    "MAX_SESSIONS_PER_PRINCIPAL": 100000,
}


class Reply(NamedTuple):
    status: int
    headers: dict[bytes, bytes]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)

    def messages(self) -> list[Any]:
        """The JSON-RPC messages of the reply: the JSON body, or every SSE ``data:`` line."""
        if self.headers.get(b"content-type", b"").startswith(b"text/event-stream"):
            lines = self.body.split(b"\n")
            return [json.loads(line[5:]) for line in lines if line.startswith(b"data:") and line[5:].strip()]
        return [self.json()] if self.body else []


async def call(
    app: Any,
    body: bytes,
    headers: Headers | None = None,
    *,
    method: str = "POST",
    path: str = "/mcp",
    root_path: str = "",
) -> Reply:
    """``method path`` with ``body`` and ``headers`` (default ``JSON_POST``), within ``DEADLINE``."""
    scope = {
        "type": "http",
        "method": method,
        "path": path,
        "root_path": root_path,
        "query_string": b"",
        "scheme": "http",
        "headers": list(JSON_POST if headers is None else headers),
        "server": ("127.0.0.1", 8000),
        "client": ("127.0.0.1", 5555),
    }
    unread = [{"type": "http.request", "body": body, "more_body": False}]
    done = asyncio.Event()
    status, out_headers, chunks = 0, {}, []

    async def receive() -> dict[str, Any]:
        if unread:
            return unread.pop()
        await done.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
            out_headers.update(dict(message.get("headers", [])))
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                done.set()

    async with asyncio.timeout(DEADLINE):
        await app(scope, receive, send)
    return Reply(status, out_headers, b"".join(chunks))


async def post(
    app: Any,
    path: str,
    root_path: str = "",
    message: dict[str, Any] | None = None,
    headers: dict[str, str] | None = None,
) -> Reply:
    """POST ``message`` (default: initialize) as JSON to ``path``, with ``headers`` added."""
    body = json.dumps(message or INITIALIZE).encode()
    sent = [
        (b"host", b"127.0.0.1:8000"),
        (b"content-type", b"application/json"),
        (b"accept", b"application/json, text/event-stream"),
        (b"content-length", str(len(body)).encode()),
        *((k.lower().encode(), v.encode()) for k, v in (headers or {}).items()),
    ]
    return await call(app, body, sent, path=path, root_path=root_path)


async def open_session(app: Any, version: str = "2025-11-25") -> Headers:
    """Initialize a session; the headers every later request of it carries."""
    initialize = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "fuzz", "version": "1"},
        },
    }
    reply = await call(app, json.dumps(initialize).encode())
    assert reply.status == 200, reply
    session = [
        (b"mcp-session-id", reply.headers[b"mcp-session-id"]),
        (b"mcp-protocol-version", version.encode()),
    ]
    return [*JSON_POST, *session]
