"""One POST to ``/mcp`` straight into an ASGI app, no sockets and no HTTP server: for CPU per call
in-process (``bench_routing.py``, ``bench_inprocess.py``). ``receive`` says ``http.disconnect``
as soon as the body is read and nothing waits on a deadline: this is the hot loop being timed
(``tests/support/asgi_call.py`` is the tests' bounded version)."""

from __future__ import annotations

from typing import Any

from tests.support.asgi_call import INITIALIZE, JSON_POST

__all__ = ["CALL", "HEADERS", "INITIALIZE", "request"]

HEADERS = [*JSON_POST, (b"mcp-protocol-version", b"2025-11-25")]
CALL = {
    "jsonrpc": "2.0",
    "id": 2,
    "method": "tools/call",
    "params": {"name": "echo", "arguments": {"message": "hi"}},
}


async def request(
    app: Any, body: bytes, session: bytes | None = None, base: list[tuple[bytes, bytes]] = HEADERS
) -> list[dict[str, Any]]:
    """One POST to ``/mcp`` straight into the ASGI ``app``; the messages it sent."""
    headers = base + ([(b"mcp-session-id", session)] if session else [])
    scope = {
        "type": "http",
        "method": "POST",
        "path": "/mcp",
        "root_path": "",
        "query_string": b"",
        "headers": headers,
        "server": ("127.0.0.1", 8000),
        "client": ("127.0.0.1", 1),
        "scheme": "http",
    }
    sent: list[dict[str, Any]] = []
    pending = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive() -> dict[str, Any]:
        return pending.pop() if pending else {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(scope, receive, send)
    return sent
