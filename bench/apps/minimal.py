"""What the bench's hand-written ASGI apps (``bare.py``, ``floor.py``) share: the
lifespan handshake and reading a whole request body, each written once and as cheaply as ASGI
allows (both apps exist to measure what little they do)."""

from __future__ import annotations

from typing import Any


async def lifespan(receive: Any, send: Any) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


async def read_body(receive: Any) -> bytes:
    body = b""
    more = True
    while more:
        message = await receive()
        body += message.get("body", b"")
        more = message.get("more_body", False)
    return body
