"""Reading a POST body within ``MCP_MAX_BODY_BYTES`` ([L] transports: 413 beyond it, checked on
``Content-Length`` first and then on the bytes as they arrive, so a chunked body cannot slip by).
"""

from __future__ import annotations

from .responses import HTTPError, Receive


class ClientGone(Exception):
    """The client disconnected while the body was being read: nobody to answer."""


async def read_body(receive: Receive, limit: int, content_length: str | None) -> bytes:
    if content_length is not None and content_length.isdigit() and int(content_length) > limit:
        raise HTTPError(413, f"Payload Too Large: the body exceeds {limit} bytes")
    message = await receive()
    if message["type"] == "http.disconnect":
        raise ClientGone()
    body: bytes = message.get("body", b"")
    if not message.get("more_body"):
        if len(body) > limit:
            raise HTTPError(413, f"Payload Too Large: the body exceeds {limit} bytes")
        return body
    chunks = [body]
    size = len(body)
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ClientGone()
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise HTTPError(413, f"Payload Too Large: the body exceeds {limit} bytes")
        chunks.append(chunk)
        if not message.get("more_body"):
            return b"".join(chunks)
