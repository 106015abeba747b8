"""How the core reaches the client while it serves one request; each transport implements it.

The core never sees streams, frames or status codes: it hands ``Outbound`` whole JSON-RPC
notifications and server→client requests that belong to the request being served, and the
transport decides where they go (stdout; an SSE event on the POST's own stream, stored for
``Last-Event-ID`` replay). A transport also owns the client's *responses* to server→client
requests: it matches them to ``request()`` callers itself (in-process, or through the bus when
another worker received the reply), so the core's ``Server.handle`` only ever sees requests and
notifications.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any


class Outbound(ABC):
    @abstractmethod
    async def notify(self, method: str, params: dict[str, Any] | None) -> None:
        """Send a notification related to the current request (progress, log message)."""

    @abstractmethod
    async def request(
        self, method: str, params: dict[str, Any] | None, timeout: float
    ) -> dict[str, Any]:
        """Send a server→client request related to the current request and await its result.

        Returns the ``result`` object; raises ``ClientRequestError`` for an error reply or when no
        reply arrives within ``timeout`` seconds.
        """

    async def close_stream(self) -> None:  # noqa: B027 - optional: only resumable transports act
        """End the connection carrying this request's messages without ending the request
        ([11] basic/transports.mdx "SSE polling", SEP-1699): the client reconnects and receives
        the rest. Transports that cannot resume do nothing."""


class NullOutbound(Outbound):
    """For requests with nowhere to stream to (tests, try-it in the admin): drops notifications,
    refuses server→client requests."""

    def __init__(self) -> None:
        self.notifications: list[tuple[str, dict[str, Any] | None]] = []

    async def notify(self, method: str, params: dict[str, Any] | None) -> None:
        self.notifications.append((method, params))

    async def request(
        self, method: str, params: dict[str, Any] | None, timeout: float
    ) -> dict[str, Any]:
        from .errors import ClientRequestError

        raise ClientRequestError(f"{method} is not available here: no client connection")
