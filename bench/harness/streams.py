"""Many standalone GET streams held open on loopback, over raw asyncio sockets: sessions made with
one-shot POSTs, ``Stream`` protocols that count each ``list_changed`` as it arrives, a ``Counter``
that wakes whoever waits for the n-th notification on every stream, and the RSS of a process.
A protocol, not a StreamReader loop: with 10,000 streams the client shares the machine's two
cores with the servers it measures (``bench_fanout.py``, ``tracemalloc_streams.py``)."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

VERSION = "2025-11-25"


async def request(port: int, body: dict[str, object], session: str | None = None) -> tuple[int, str | None]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        data = json.dumps(body).encode()
        head = (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: application/json, "
                f"text/event-stream\r\nContent-Type: application/json\r\nMCP-Protocol-Version: {VERSION}"
                f"\r\nContent-Length: {len(data)}\r\nConnection: close\r\n")
        if session:
            head += f"Mcp-Session-Id: {session}\r\n"
        writer.write(head.encode() + b"\r\n" + data)
        raw = await reader.read()
    finally:
        writer.close()
    status = int(raw.split(b" ", 2)[1])
    sid = None
    for line in raw.split(b"\r\n\r\n", 1)[0].split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"mcp-session-id":
            sid = value.strip().decode()
    return status, sid


async def new_session(port: int) -> str:
    status, sid = await request(port, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "fanout", "version": "1"}}})
    if status != 200 or sid is None:
        raise RuntimeError(f"initialize failed: {status}")
    status, _ = await request(port, {"jsonrpc": "2.0", "method": "notifications/initialized"}, sid)
    if status != 202:
        raise RuntimeError(f"notifications/initialized failed: {status}")
    return sid


NOTE = b"list_changed"


class Stream(asyncio.Protocol):
    """One open standalone GET stream; records when each list_changed arrives. A protocol, not
    a StreamReader loop: with 10,000 streams this harness shares the machine's two cores with
    the servers, and a coroutine step per chunk cost it ~200 ms of CPU per change."""

    def __init__(self, port: int, session: str, counter: Counter) -> None:
        self.port, self.session, self.counter = port, session, counter
        self.received: list[float] = []
        self.opened = asyncio.Event()
        self.failed: str | None = None
        self.transport: asyncio.Transport | None = None
        self.head: bytes | None = b""  # the response head until its end is seen, then None
        self.tail = b""  # the last len(NOTE) - 1 bytes: a note split over two reads is counted once
        self.ended = asyncio.Event()

    async def run(self) -> None:
        try:
            loop = asyncio.get_running_loop()
            await loop.create_connection(lambda: self, "127.0.0.1", self.port)
            await self.ended.wait()
        except OSError as exc:
            self.failed = str(exc)[:120]
        finally:
            self.opened.set()  # opened or failed: either way nothing more to wait for

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        transport.write((f"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\nAccept: text/event-stream"  # type: ignore[attr-defined]
                         f"\r\nMCP-Protocol-Version: {VERSION}\r\nMcp-Session-Id: {self.session}\r\n\r\n"
                         ).encode())

    def data_received(self, data: bytes) -> None:
        if self.head is not None:
            self.head += data
            end = self.head.find(b"\r\n\r\n")
            if end < 0:
                return
            if b" 200 " not in self.head.split(b"\r\n", 1)[0]:
                self.failed = f"GET failed: {self.head[:80]!r}"
                self.ended.set()
                return
            data, self.head = self.head[end + 4:], None
        if not data:
            return
        self.opened.set()  # the first body bytes (priming event or keep-alive)
        buf = self.tail + data
        hits = buf.count(NOTE)
        self.tail = buf[-(len(NOTE) - 1):]
        if hits:
            now = time.time()
            for _ in range(hits):
                self.received.append(now)
                self.counter.hit(len(self.received))

    def connection_lost(self, exc: Exception | None) -> None:
        self.ended.set()

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()


class Counter:
    """How many streams got their n-th notification; wakes whoever waits for all of them."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.counts: dict[int, int] = {}
        self.done: dict[int, asyncio.Event] = {}

    def event(self, n: int) -> asyncio.Event:
        return self.done.setdefault(n, asyncio.Event())

    def hit(self, n: int) -> None:
        self.counts[n] = self.counts.get(n, 0) + 1
        if self.counts[n] == self.total:
            self.event(n).set()


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


async def gather_limited(factories: list, limit: int = 32) -> list:  # type: ignore[type-arg]
    sem = asyncio.Semaphore(limit)

    async def one(factory):  # type: ignore[no-untyped-def]
        async with sem:
            return await factory()

    return await asyncio.gather(*(one(f) for f in factories))


def run(coro):  # type: ignore[no-untyped-def]
    try:
        import uvloop
    except ImportError:
        return asyncio.run(coro)
    return uvloop.run(coro)
