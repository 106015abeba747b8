"""Calling the ``/mcp`` ASGI endpoint in-process with raw bytes, for the hostile-input tests.

In-process is right here: these tests look at status codes and JSON bodies of one-shot POSTs,
never at streaming (which only a real server shows). Every call is bounded by a deadline.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

from mcp_protocol.transports.http import MCPEndpoint

DEADLINE = 10.0
JSON_POST = [
    (b"host", b"127.0.0.1"),
    (b"accept", b"application/json, text/event-stream"),
    (b"content-type", b"application/json"),
]
MEMORY_MCP = {
    "PROVIDER": {"BACKEND": "mcp_protocol.memory_provider.MemoryProvider", "OPTIONS": {}},
    "SESSION_STORE": {"BACKEND": "mcp_protocol.stores.memory.MemorySessionStore", "OPTIONS": {}},
    "EVENT_STORE": {"BACKEND": "mcp_protocol.stores.memory.MemoryEventStore", "OPTIONS": {}},
    "BUS": {"BACKEND": "mcp_protocol.bus.memory.MemoryBus", "OPTIONS": {}},
    "MAX_SESSIONS": 100000,
    "MAX_SESSIONS_PER_PRINCIPAL": 100000,
}


@dataclass
class Reply:
    status: int
    headers: dict[bytes, bytes]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)

    def messages(self) -> list[Any]:
        """The JSON-RPC messages of the reply: the JSON body, or every SSE ``data:`` line."""
        if self.headers.get(b"content-type", b"").startswith(b"text/event-stream"):
            return [json.loads(line[5:]) for line in self.body.split(b"\n")
                    if line.startswith(b"data:") and line[5:].strip()]
        return [self.json()] if self.body else []


async def call(
    endpoint: MCPEndpoint, body: bytes, headers: list[tuple[bytes, bytes]] | None = None,
    method: str = "POST",
) -> Reply:
    scope = {
        "type": "http", "method": method, "path": "/mcp", "query_string": b"",
        "headers": list(JSON_POST if headers is None else headers),
        "server": ("127.0.0.1", 8000), "client": ("127.0.0.1", 5555),
    }
    sent = [{"type": "http.request", "body": body, "more_body": False}]
    done = asyncio.Event()
    status, out_headers, chunks = 0, {}, []

    async def receive() -> dict[str, Any]:
        if sent:
            return sent.pop()
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
        await endpoint(scope, receive, send)
    return Reply(status, out_headers, b"".join(chunks))


async def open_session(endpoint: MCPEndpoint, version: str = "2025-11-25") -> list[tuple[bytes, bytes]]:
    """Initialize a session; the headers every later request of it carries."""
    reply = await call(endpoint, json.dumps({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": version, "capabilities": {},
                   "clientInfo": {"name": "fuzz", "version": "1"}},
    }).encode())
    assert reply.status == 200, reply
    return [*JSON_POST, (b"mcp-session-id", reply.headers[b"mcp-session-id"]),
            (b"mcp-protocol-version", version.encode())]
