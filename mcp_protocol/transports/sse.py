"""Server-Sent Events framing and one writer per HTTP response stream.

Owns the bytes on the wire of an SSE response ([L] basic/transports.mdx; WHATWG "Server-sent
events"): ``event: message`` frames with an ``id``, the [11] priming event (an id and empty data),
``retry`` before a server-side close ([11] "Resumability": SEP-1699 polling), keep-alive comments,
and the headers (``Cache-Control: no-cache``; ``X-Accel-Buffering: no`` so nginx does not buffer,
[26] streamable-http.mdx). It does not know which messages go on which stream (``streams.py``).

``SSEWriter`` serialises writes (the keep-alive task and the handler share one ``send``) and turns
a client that went away into ``closed``: later writes are dropped, the caller keeps its events in
the event store for a ``Last-Event-ID`` resume.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Sequence

from .responses import Send

SSE_HEADERS: list[tuple[bytes, bytes]] = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),
]
KEEPALIVE = b": keep-alive\n\n"


def frame(data: bytes, event_id: str | None = None) -> bytes:
    """One ``message`` event. ``data`` is compact JSON, which never contains a newline."""
    if event_id is None:
        return b"event: message\ndata: " + data + b"\n\n"
    return b"event: message\nid: " + event_id.encode("ascii") + b"\ndata: " + data + b"\n\n"


def priming(event_id: str, retry_ms: int | None = None) -> bytes:
    """[11] transports.mdx: "immediately send an SSE event consisting of an event ID and an empty
    data field". Never sent to older clients: they fail parsing empty data as JSON."""
    retry = b"" if retry_ms is None else b"retry: %d\n" % retry_ms
    return b"id: " + event_id.encode("ascii") + b"\n" + retry + b"data: \n\n"


def retry(retry_ms: int) -> bytes:
    """A retry-only event, sent before a server-side close so the client waits, then resumes."""
    return b"retry: %d\n\n" % retry_ms


class SSEWriter:
    # One per open stream (10,000 a worker): slots, and no asyncio.Lock (an object and a dict
    # each) for writes that almost never overlap; a queue is made only when one does.
    __slots__ = ("_busy", "_held", "_send", "_waiters", "closed", "started")

    def __init__(self, send: Send) -> None:
        self._send = send
        self._busy = False
        self._waiters: deque[asyncio.Future[None]] | None = None
        self.started = False
        self.closed = False
        self._held = b""

    async def _acquire(self) -> None:
        if not self._busy:
            self._busy = True
            return
        if self._waiters is None:
            self._waiters = deque()
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(turn)
        try:
            await turn  # _release hands the writer over: _busy stays set
        except asyncio.CancelledError:
            if turn.done() and not turn.cancelled():
                self._release()  # handed over as the cancel came: pass it on
            raise

    def _release(self) -> None:
        waiters = self._waiters
        while waiters:
            turn = waiters.popleft()
            if not turn.done():  # a cancelled waiter's turn is skipped
                turn.set_result(None)
                return
        self._busy = False

    async def start(self, headers: Sequence[tuple[bytes, bytes]] = ()) -> None:
        self.started = True
        await self._send({"type": "http.response.start", "status": 200, "headers": [*SSE_HEADERS, *headers]})

    def hold(self, chunk: bytes) -> None:
        """Keep ``chunk`` to go out in front of the next write, close or ``flush``: one socket
        write instead of two when something follows soon (a POST stream's priming event and its
        response); its owner flushes it if nothing does (``streams.py``)."""
        self._held += chunk

    @property
    def holding(self) -> bool:
        return bool(self._held)

    async def flush(self) -> None:
        if self._held:
            await self.write(b"")

    async def write(self, chunk: bytes) -> bool:
        """Write a chunk; False if the stream is closed (the client left or the server closed it)."""
        if self.closed:
            return False
        await self._acquire()
        try:
            if self.closed:
                return False
            chunk, self._held = self._held + chunk, b""
            try:
                await self._send({"type": "http.response.body", "body": chunk, "more_body": True})
            except OSError:  # uvicorn's ClientDisconnected; the disconnect watcher also notices
                self.closed = True
                return False
        finally:
            self._release()
        return True

    async def close(self, retry_ms: int | None = None, tail: bytes = b"") -> None:
        """End the HTTP response (not necessarily the logical stream: the client may resume it).
        ``tail``: the last events, written in the same ASGI message (one write and one chunk
        fewer than a ``write`` before the close)."""
        if self.closed:
            return
        await self._acquire()
        try:
            if self.closed:
                return
            self.closed = True
            body = self._held + tail + (retry(retry_ms) if retry_ms is not None else b"")
            self._held = b""
            try:
                await self._send({"type": "http.response.body", "body": body, "more_body": False})
            except OSError:
                pass
        finally:
            self._release()

    def detach(self) -> None:
        """The client disconnected: stop writing without touching ``send`` again."""
        self.closed = True
