"""The benchmark's HTTP/1.1 clients: a minimal keep-alive client on raw asyncio streams, and httpx.

The load generator shares the 2-core machine with the server it measures, so every microsecond the
client spends per request is taken from the server. The raw client sends prebuilt request bytes
and parses only what the benchmark needs (status, ``Content-Length`` / chunked framing,
``Mcp-Session-Id``); ``bench.py --client httpx`` runs the same load through ``httpx.AsyncClient``
and both print the client's CPU time per request, which is how the choice was measured (see
bench/README.md). One connection per concurrent worker, kept alive across requests.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

import httpx

ACCEPT = b"application/json, text/event-stream"


@dataclass
class Response:
    status: int
    body: bytes
    session_id: str | None = None
    headers: dict[bytes, bytes] = field(default_factory=dict)


class Client(Protocol):
    async def send(self, method: str, body: bytes | None, headers: dict[str, str]) -> Response: ...

    async def close(self) -> None: ...


class RawConnection:
    """One keep-alive HTTP/1.1 connection; reconnects if the server closed it between requests."""

    def __init__(self, host: str, port: int, path: str) -> None:
        self.host, self.port, self.path = host, port, path.encode()
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None
        self.prefix = f"Host: {host}:{port}\r\nAccept: ".encode() + ACCEPT + b"\r\n"

    async def send(self, method: str, body: bytes | None, headers: dict[str, str]) -> Response:
        if self.writer is None or self.writer.is_closing():
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        assert self.reader is not None
        extra = "".join(f"{name}: {value}\r\n" for name, value in headers.items()).encode()
        head = method.encode() + b" " + self.path + b" HTTP/1.1\r\n" + self.prefix + extra
        if body is not None:
            head += b"Content-Type: application/json\r\nContent-Length: %d\r\n" % len(body)
        self.writer.write(head + b"\r\n" + (body or b""))
        return await self._read_response(self.reader, method)

    async def _read_response(self, reader: asyncio.StreamReader, method: str) -> Response:
        raw_head = await reader.readuntil(b"\r\n\r\n")
        lines = raw_head.split(b"\r\n")
        status = int(lines[0].split(b" ", 2)[1])
        headers: dict[bytes, bytes] = {}
        for line in lines[1:]:
            if line:
                name, _, value = line.partition(b":")
                headers[name.strip().lower()] = value.strip()
        if b"content-length" in headers:
            body = await reader.readexactly(int(headers[b"content-length"]))
        elif headers.get(b"transfer-encoding", b"").lower() == b"chunked":
            body = await self._read_chunked(reader)
        elif status in (204, 304) or method == "HEAD":
            body = b""
        else:
            body = await reader.read()
            headers[b"connection"] = b"close"
        if headers.get(b"connection", b"").lower() == b"close":
            await self.close()
        session = headers.get(b"mcp-session-id")
        return Response(status, body, session.decode() if session else None, headers)

    @staticmethod
    async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
        parts: list[bytes] = []
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";", 1)[0], 16)
            if size == 0:
                # Trailer section: header lines until an empty one (RFC 9112 §7.1.2).
                while (await reader.readuntil(b"\r\n")) != b"\r\n":
                    pass
                return b"".join(parts)
            parts.append((await reader.readexactly(size + 2))[:-2])

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            try:
                await self.writer.wait_closed()
            except OSError:
                pass
            self.writer = self.reader = None


class HttpxConnection:
    """The same interface over a shared ``httpx.AsyncClient`` (pool sized to the concurrency)."""

    def __init__(self, client: httpx.AsyncClient, url: str) -> None:
        self.client, self.url = client, url

    async def send(self, method: str, body: bytes | None, headers: dict[str, str]) -> Response:
        all_headers = {"accept": ACCEPT.decode(), **headers}
        if body is not None:
            all_headers["content-type"] = "application/json"
        response = await self.client.request(method, self.url, content=body, headers=all_headers)
        return Response(response.status_code, response.content, response.headers.get("mcp-session-id"))

    async def close(self) -> None:
        return None


def httpx_pool(concurrency: int) -> httpx.AsyncClient:
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    return httpx.AsyncClient(limits=limits, timeout=30.0, trust_env=False)


def address(url: str) -> tuple[str, int]:
    """The host and port of ``http://host:port/...``."""
    host, port = url.split("//", 1)[1].split("/", 1)[0].split(":")
    return host, int(port)


class Authorized:
    """A bench client that sends ``Authorization: Bearer <token>`` with every request."""

    def __init__(self, inner: Client, token: str | None) -> None:
        self.inner, self.extra = inner, {"Authorization": f"Bearer {token}"} if token else {}

    async def send(self, method: str, body: bytes | None, headers: dict[str, str]) -> Response:
        return await self.inner.send(method, body, {**headers, **self.extra})

    async def close(self) -> None:
        await self.inner.close()


def raw_connector(url: str, token: str | None = None) -> Callable[[], Client]:
    """A factory of raw keep-alive connections to the MCP endpoint at ``url``, with ``token``."""
    host, port = address(url)
    if token is None:
        return lambda: RawConnection(host, port, "/mcp")
    return lambda: Authorized(RawConnection(host, port, "/mcp"), token)

