"""What an upstream's answer to a POST holds: the JSON-RPC messages of a JSON body or of an SSE
stream (basic/transports.mdx, Streamable HTTP, "Sending Messages to the Server": the server answers
a request with ``application/json`` (one message) or ``text/event-stream``, on which requests and
notifications related to the request MAY come before its response).

Both are bounded: a JSON body, or one SSE event's data, over ``limit`` bytes is ``TooLarge`` (a
hostile upstream's answer is not buffered unbounded), and a body that is not JSON-RPC is
``Malformed``. ``SseParser`` is the event-stream framing alone (WHATWG HTML "Server-sent events",
"Event stream interpretation"): lines end with LF or CRLF, ``data:`` lines join with LF, an empty
line dispatches, events named other than ``message``, events without data (the priming event a
resumable stream starts with: basic/transports.mdx, "Resumability") and comments are skipped.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from typing import Any

import aiohttp

JSON = "application/json"
EVENT_STREAM = "text/event-stream"


class TooLarge(Exception):
    pass


class Malformed(Exception):
    pass


class SseParser:
    """Feed bytes as they arrive; ``feed`` returns the data of each complete ``message`` event."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._pending: list[bytes] = []  # the current line's pieces, not yet ended by LF
        self._pending_size = 0
        self._data: list[bytes] = []
        self._data_size = 0
        self._event = b""

    def feed(self, chunk: bytes) -> list[bytes]:
        found: list[bytes] = []
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            if end < 0:
                break
            piece = chunk[start:end]
            if self._pending:
                piece = b"".join((*self._pending, piece))
                self._pending.clear()
                self._pending_size = 0
            self._line(piece[:-1] if piece.endswith(b"\r") else piece, found)
            start = end + 1
        if start < len(chunk):
            self._pending.append(chunk[start:])
            self._pending_size += len(chunk) - start
            if self._pending_size + self._data_size > self.limit:
                raise TooLarge(f"an event of more than {self.limit} bytes")
        return found

    def _line(self, line: bytes, found: list[bytes]) -> None:
        if not line:  # dispatch
            data = b"\n".join(self._data)
            if data.strip() and self._event in (b"", b"message"):  # empty: a priming event (an id only)
                found.append(data)
            self._data.clear()
            self._data_size = 0
            self._event = b""
            return
        if line.startswith(b":"):
            return  # a comment (keep-alive)
        name, colon, value = line.partition(b":")
        if colon and value.startswith(b" "):
            value = value[1:]
        if name == b"data":
            self._data.append(value)
            self._data_size += len(value) + 1
            if self._data_size > self.limit:
                raise TooLarge(f"an event of more than {self.limit} bytes")
        elif name == b"event":
            self._event = value
        # id and retry matter to a client that resumes a stream; this one does not (wire.py).


def message(data: bytes) -> dict[str, Any]:
    """One JSON-RPC message (an object with ``jsonrpc`` "2.0"), else ``Malformed``."""
    try:
        parsed = json.loads(data)
    except ValueError:
        raise Malformed("the upstream sent something that is not JSON") from None
    if not isinstance(parsed, dict) or parsed.get("jsonrpc") != "2.0":
        raise Malformed("the upstream sent something that is not a JSON-RPC message")
    return parsed


async def messages(response: aiohttp.ClientResponse, limit: int) -> AsyncGenerator[dict[str, Any]]:
    """The messages of ``response`` in the order they arrive."""
    kind = response.headers.get("Content-Type", "").partition(";")[0].strip().lower()
    if kind == JSON:
        if response.content_length is not None and response.content_length > limit:
            raise TooLarge(f"a body of {response.content_length} bytes")
        pieces: list[bytes] = []
        size = 0
        async for chunk in response.content.iter_any():
            size += len(chunk)
            if size > limit:
                raise TooLarge(f"a body of more than {limit} bytes")
            pieces.append(chunk)
        yield message(b"".join(pieces))
    elif kind == EVENT_STREAM:
        parser = SseParser(limit)
        async for chunk in response.content.iter_any():
            for data in parser.feed(chunk):
                yield message(data)
    else:
        raise Malformed(f"the upstream answered with content type {kind or 'none'!r}")
