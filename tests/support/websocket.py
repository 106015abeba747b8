"""A minimal RFC 6455 websocket client (handshake, one masked text frame out, one text frame in):
enough to show a project's own Channels websocket route still works beside /mcp, without a
websocket package in the test dependencies."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import os
import struct

GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"  # RFC 6455 §1.3


async def exchange(host: str, port: int, path: str, text: str, timeout: float = 10.0) -> str:
    """Open ``ws://host:port/path``, send ``text``, return the first text frame received."""
    async with asyncio.timeout(timeout):
        reader, writer = await asyncio.open_connection(host, port)
        try:
            key = base64.b64encode(os.urandom(16))
            writer.write(
                f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
                f"Connection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
                f"Origin: http://{host}:{port}\r\n".encode() + b"Sec-WebSocket-Key: " + key + b"\r\n\r\n"
            )
            head = await reader.readuntil(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 101"), head
            accept = base64.b64encode(hashlib.sha1(key + GUID).digest())
            assert b"sec-websocket-accept: " + accept.lower() in head.lower(), head
            payload, mask = text.encode(), os.urandom(4)
            assert len(payload) < 126
            masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
            writer.write(bytes([0x81, 0x80 | len(payload)]) + mask + masked)  # FIN + text, masked
            first, second = await reader.readexactly(2)
            assert first & 0x0F == 0x1, f"opcode {first & 0x0F}"
            length = second & 0x7F
            if length == 126:
                (length,) = struct.unpack("!H", await reader.readexactly(2))
            return (await reader.readexactly(length)).decode()
        finally:
            writer.close()
