"""In-process bus: per-channel subscriber queues, for a single process (the embedded default).

Owns ``MemoryBus`` and its ``MemorySubscription`` (a ``base.QueuedSubscription``). Each
subscription's queue belongs to the event loop that subscribed; publishers on any thread (a Django
signal handler run by ``sync_to_async``, a shell with no loop at all) hand messages over with
``loop.call_soon_threadsafe``. Messages travel as JSON copies, as over Redis, so a subscriber never
shares an object with the publisher. Delivery is at-most-once: a subscriber that falls
``max_queue`` messages behind loses the newest.
"""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

from .base import Bus, QueuedSubscription, Subscription


class MemorySubscription(QueuedSubscription):
    def __init__(self, bus: MemoryBus, channel: str, max_queue: int) -> None:
        super().__init__(channel, max_queue)
        self._bus = bus
        self.loop = asyncio.get_running_loop()

    async def close(self) -> None:
        if self.closed:
            return
        self._bus._remove(self)
        self.end()


class MemoryBus(Bus):
    def __init__(self, *, max_queue: int = 10000, **options: Any) -> None:
        super().__init__(**options)
        self.max_queue = max_queue
        self._lock = threading.Lock()
        self._channels: dict[str, set[MemorySubscription]] = {}

    async def publish(self, channel: str, message: dict[str, Any]) -> None:
        self._send(channel, message, asyncio.get_running_loop())

    def publish_sync(self, channel: str, message: dict[str, Any]) -> None:
        self._send(channel, message, None)

    def _send(self, channel: str, message: dict[str, Any], here: asyncio.AbstractEventLoop | None) -> None:
        payload = json.dumps(message)
        with self._lock:
            targets = list(self._channels.get(channel, ()))
        for sub in targets:
            if sub.loop is here:
                sub.deliver(payload)
                continue
            try:
                sub.loop.call_soon_threadsafe(sub.deliver, payload)
            except RuntimeError:  # the subscriber's loop is closed: nobody will ever read it
                self._remove(sub)

    async def subscribe(self, channel: str) -> Subscription:
        sub = MemorySubscription(self, channel, self.max_queue)
        with self._lock:
            self._channels.setdefault(channel, set()).add(sub)
        return sub

    def _remove(self, sub: MemorySubscription) -> None:
        with self._lock:
            subs = self._channels.get(sub.channel)
            if subs is not None:
                subs.discard(sub)
                if not subs:
                    del self._channels[sub.channel]

    async def close(self) -> None:
        with self._lock:
            subs = [s for group in self._channels.values() for s in group]
        for sub in subs:
            if sub.loop is asyncio.get_running_loop():
                await sub.close()
            else:
                sub.closed = True
                self._remove(sub)
