"""Shared fixtures for the protocol-core unit tests: a server over the demo MemoryProvider, ready
sessions for any revision, and an Outbound that records what the core sends to the client."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from mcp_protocol.errors import ClientRequestError
from mcp_protocol.jsonrpc import Notification, Request
from mcp_protocol.memory_provider import MemoryProvider
from mcp_protocol.outbound import Outbound
from mcp_protocol.server import Server
from mcp_protocol.session import Session

SECRET = b"test-cursor-secret"
MODERN_META_VERSION = "io.modelcontextprotocol/protocolVersion"


class RecordingOutbound(Outbound):
    """Records notifications; answers server→client requests with ``responder`` (or refuses)."""

    def __init__(
        self, responder: Callable[[str, dict[str, Any] | None], Awaitable[dict[str, Any]]] | None = None
    ):
        self.notifications: list[tuple[str, dict[str, Any] | None]] = []
        self.requests: list[tuple[str, dict[str, Any] | None]] = []
        self.responder = responder

    async def notify(self, method: str, params: dict[str, Any] | None) -> None:
        self.notifications.append((method, params))

    async def request(self, method: str, params: dict[str, Any] | None, timeout: float) -> dict[str, Any]:
        self.requests.append((method, params))
        if self.responder is None:
            raise ClientRequestError("no client here")
        return await self.responder(method, params)

    def of(self, method: str) -> list[dict[str, Any]]:
        return [p or {} for m, p in self.notifications if m == method]


def make_server(provider: Any = None, **kwargs: Any) -> Server:
    return Server(
        provider if provider is not None else MemoryProvider(),
        name="test-server",
        version="1.2.3",
        title="Test Server",
        cursor_secret=SECRET,
        **kwargs,
    )


async def initialized(
    server: Server, version: str = "2025-11-25", capabilities: dict[str, Any] | None = None
) -> Session:
    session = Session.create()
    response = await server.handle(
        Request(
            0,
            "initialize",
            {
                "protocolVersion": version,
                "capabilities": capabilities or {},
                "clientInfo": {"name": "t", "version": "0"},
            },
        ),
        session,
        RecordingOutbound(),
    )
    assert response is not None and "result" in response, response
    await server.handle(Notification("notifications/initialized", None), session, RecordingOutbound())
    return session


async def call(
    server: Server,
    session: Session,
    method: str,
    params: dict[str, Any] | None = None,
    *,
    id: int = 1,
    outbound: Outbound | None = None,
) -> dict[str, Any]:
    response = await server.handle(Request(id, method, params), session, outbound or RecordingOutbound())
    assert response is not None
    assert response["id"] == id
    return response


def modern_meta(version: str = "2026-07-28", **extra: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {MODERN_META_VERSION: version, "io.modelcontextprotocol/clientCapabilities": {}}
    meta.update(extra)
    return meta


@pytest.fixture
def server() -> Server:
    return make_server()


@pytest.fixture
def outbound() -> RecordingOutbound:
    return RecordingOutbound()
