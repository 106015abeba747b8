"""A loopback JSON upstream for the ``http`` tool kind (``bench_http_kind.py``): the least an HTTP
API can do, so the bench measures our client, not the upstream.

Any method on any path answers ``200 application/json``: ``{"message": ...}`` with the request's
JSON ``message`` (POST/PUT/PATCH) or the ``message`` query parameter (GET/DELETE), else "hello".
Served by uvicorn (uvloop + httptools), one worker: ``uvicorn bench.apps.json_upstream:app``.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qs


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    body = b""
    more = True
    while more:
        message = await receive()
        body += message.get("body", b"")
        more = message.get("more_body", False)
    text = "hello"
    if body:
        try:
            text = str(json.loads(body).get("message", text))
        except (ValueError, AttributeError):
            pass
    else:
        text = parse_qs(scope.get("query_string", b"").decode()).get("message", [text])[0]
    payload = json.dumps({"message": text}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(payload)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": payload})
