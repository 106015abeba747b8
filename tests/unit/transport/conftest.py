"""What the transport tests share: a runtime with just what a response stream uses, on memory
backends, and an ASGI wire that records what is sent."""

from __future__ import annotations

import asyncio
from typing import Any

from mcp_protocol.bus.memory import MemoryBus
from mcp_protocol.stores.memory import MemoryEventStore
from mcp_protocol.transports.later import Wheel
from mcp_protocol.transports.leases import Leases
from mcp_protocol.transports.pending import PendingRequests
from mcp_protocol.transports.runtime import TransportConfig


class FakeRuntime:
    """Just what PostStream uses of ``runtime.Runtime``."""

    def __init__(self, **config: Any) -> None:
        defaults: dict[str, Any] = {
            "always_stream": False,
            "keepalive": 30.0,
            "retry_ms": 100,
            "close_after": None,
            "max_body": 1000,
            "allowed_hosts": [],
            "allowed_origins": [],
        }
        self.config = TransportConfig(**{**defaults, **config})
        self.events = MemoryEventStore()
        self.pending = PendingRequests(MemoryBus())
        self.leases = Leases(self.events)
        self.stopping = False
        self.later = Wheel()
        self.live: list[asyncio.Event] = []

    def register_stream(self, session_id: str) -> asyncio.Event:
        event = asyncio.Event()
        self.live.append(event)
        return event

    def unregister_stream(self, session_id: str, ended: asyncio.Event) -> None:
        self.live.remove(ended)


class Wire:
    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []
        self.gone = asyncio.Event()
        self.changed = asyncio.Event()

    async def send(self, message: Any) -> None:
        self.sent.append(message)
        self.changed.set()

    async def until(self, needle: bytes) -> None:
        async with asyncio.timeout(5):
            while needle not in self.body:
                self.changed.clear()
                await self.changed.wait()

    async def receive(self) -> dict[str, Any]:
        await self.gone.wait()
        return {"type": "http.disconnect"}

    @property
    def body(self) -> bytes:
        return b"".join(m.get("body", b"") for m in self.sent if m["type"] == "http.response.body")
