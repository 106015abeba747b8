"""Cross-worker delivery: publish a JSON message on a named channel, every subscriber gets it.

Backends: ``memory.py`` (one process) and ``redis.py`` (every worker), chosen by
``MCP["BUS"] = {"BACKEND": ..., "OPTIONS": ...}``. Channels used by the server:

- ``changes``: the registry committed a change ``{"id", "kind", "uris": [...], "endpoints":
  [...]}`` (the shape: ``fanout/notifications.py``); every worker rebuilds its snapshot, and
  list_changed / resources/updated reach the streams of the endpoints it names that asked for them.
- ``session:<id>``: a client's response to a server→client request, delivered to the worker
  whose handler awaits it.

Delivery is at-most-once per subscriber and carries no history; what must survive a reconnect is
written to the ``EventStore`` instead. A backend that lost its connection delivers ``RESYNC`` to
every subscription once it reads again: messages may have been missed, so a subscriber that keeps
state derived from them (a worker's registry snapshot) rebuilds it.
"""

from __future__ import annotations

import asyncio
import json
import logging
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator
from typing import Any

from ..options import refuse_leftover

logger = logging.getLogger("mcp_protocol.bus")

CHANGES = "changes"
RESYNC: dict[str, str] = {"mcpsite": "resync"}  # never published: made by a backend that reconnected


def session_channel(session_id: str) -> str:
    return f"session:{session_id}"


class Subscription(ABC):
    """An async iterator of messages on one channel; ``close()`` (or ``async with``) ends it."""

    @abstractmethod
    def __aiter__(self) -> AsyncIterator[dict[str, Any]]: ...

    @abstractmethod
    async def close(self) -> None: ...

    async def __aenter__(self) -> Subscription:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


class QueuedSubscription(Subscription):
    """A subscription fed through a bounded queue on its subscriber's loop, as both backends do:
    ``deliver`` on that loop, ``end`` to stop a reader blocked in ``__aiter__``. Delivery is
    at-most-once: a subscriber ``max_queue`` messages behind loses the newest."""

    def __init__(self, channel: str, max_queue: int) -> None:
        self.channel = channel
        self.queue: asyncio.Queue[object] = asyncio.Queue(max_queue)
        self.closed = False

    def deliver(self, payload: str) -> None:
        """Runs on the subscriber's loop."""
        if self.closed:
            return
        try:
            self.queue.put_nowait(json.loads(payload))
        except asyncio.QueueFull:
            pass  # at-most-once: a subscriber this far behind drops messages
        except ValueError:
            logger.warning("Dropped a non-JSON message on %s", self.channel)

    async def __aiter__(self) -> AsyncIterator[dict[str, Any]]:
        while not self.closed:
            item = await self.queue.get()
            if item is _CLOSED:
                return
            assert isinstance(item, dict)
            yield item

    def end(self) -> None:
        """Closed: wake a reader blocked in ``__aiter__`` (it may be another task of this loop),
        making room for the wake-up if the queue is full."""
        self.closed = True
        while True:
            try:
                self.queue.put_nowait(_CLOSED)
                return
            except asyncio.QueueFull:
                self.queue.get_nowait()


_CLOSED = object()


class Bus(ABC):
    strict_options = True  # an option no class of the backend takes is refused (options.py)

    def __init__(self, **options: Any) -> None:
        refuse_leftover(self, options)

    @abstractmethod
    async def publish(self, channel: str, message: dict[str, Any]) -> None: ...

    @abstractmethod
    async def subscribe(self, channel: str) -> Subscription:
        """Subscribed once this returns: a message published after it is delivered."""

    def publish_sync(self, channel: str, message: dict[str, Any]) -> None:
        """Publish from synchronous code with no running loop of its own (a signal handler in a
        shell or a migration). Backends override with a direct call where they can."""
        from asgiref.sync import async_to_sync

        async_to_sync(self.publish)(channel, message)

    async def close(self) -> None:  # noqa: B027 (optional hook)
        """Release connections (called at shutdown)."""
