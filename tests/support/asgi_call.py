"""One HTTP request to an ASGI app in-process, for tests of routing and of the auth seam (which app
a request reaches, what status it gets), not of streaming: that needs a real server."""

from __future__ import annotations

import json
from typing import Any

INITIALIZE = {
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"},
    },
}  # fmt: skip


async def post(
    app: Any, path: str, root_path: str = "", message: dict[str, Any] | None = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, dict[bytes, bytes], bytes]:  # fmt: skip
    """POST ``message`` (default: initialize) to ``path``; (status, headers, body)."""
    body = json.dumps(message or INITIALIZE).encode()
    scope = {
        "type": "http", "method": "POST", "path": path, "root_path": root_path, "query_string": b"",
        "server": ("127.0.0.1", 8000), "client": ("127.0.0.1", 5000), "scheme": "http",
        "headers": [
            (b"host", b"127.0.0.1:8000"), (b"content-type", b"application/json"),
            (b"accept", b"application/json, text/event-stream"), (b"content-length", str(len(body)).encode()),
            *((k.lower().encode(), v.encode()) for k, v in (headers or {}).items()),
        ],
    }  # fmt: skip
    sent: list[dict[str, Any]] = []
    messages = iter([{"type": "http.request", "body": body, "more_body": False}])

    async def receive() -> dict[str, Any]:
        return next(messages, {"type": "http.disconnect"})

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(scope, receive, send)
    start = sent[0]
    return start["status"], dict(start["headers"]), b"".join(m.get("body", b"") for m in sent[1:])
