"""Redis bus: Redis pub/sub between every worker of the cluster.

Owns ``RedisBus`` and its ``Subscription``. Per event loop there is one pub/sub connection that
multiplexes every channel the process listens to, read by one task started lazily on that loop;
local subscribers get their own queue. Channel names are prefixed (``<prefix>:<channel>``) so
several deployments can share a Redis. ``subscribe`` returns only after Redis confirmed the
SUBSCRIBE, so a message published after it returns is delivered. ``publish_sync`` uses a plain
synchronous client (no loop needed: a signal handler in a shell or a migration).

Delivery is at-most-once (pub/sub keeps no history): during a Redis outage ``publish`` raises
``StoreUnavailable`` and subscribers miss what was published; the reader reconnects and
redis-py re-subscribes every channel by itself when Redis returns, and open subscriptions carry on.
Under Sentinel the reconnect asks Sentinel for the master, so it follows a failover.

On Redis Cluster this is plain (not sharded) pub/sub through redis-py's ``ClusterPubSub``: a
PUBLISH reaches the subscribers of every node, so one connection to one node hears every channel,
and redis-py sends each PUBLISH to its channel's slot owner, so the messages of one channel keep
their order. Sharded pub/sub (SSUBSCRIBE) would spread the load but needs a connection per master
read in turn, with the latency of each one's poll; the bus carries little (list changes, one
session's replies), so one connection wins. If that node stays unreachable, the reader moves the
subscriptions to a fresh connection, placed by the Cluster's current slot map.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import weakref
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from redis.asyncio.client import PubSub

from ..redis_client.connection import (
    UNAVAILABLE,
    RedisConnector,
    raise_pending_cancel,
    unavailable_as_store_error,
)
from ..redis_client.options import RedisOptions
from ..redis_client.topology import check_prefix
from ..store_errors import StoreUnavailable
from .base import RESYNC, Bus, QueuedSubscription, Subscription

logger = logging.getLogger(__name__)

RESYNC_PAYLOAD = json.dumps(RESYNC)
# Cluster: failed reads of one node in a row before the subscriptions move to a new connection.
MOVE_AFTER_FAILURES = 3


@dataclass(eq=False)
class _Listener:
    """The pub/sub connection of one event loop and the subscriptions it feeds."""

    pubsub: PubSub
    subs: dict[str, set[RedisSubscription]] = field(default_factory=dict)
    # Per channel, one future per SUBSCRIBE sent and not yet confirmed, oldest first: Redis
    # confirms in order on this one connection.
    waiting: dict[str, deque[asyncio.Future[None]]] = field(default_factory=dict)
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    # Serialises SUBSCRIBE/UNSUBSCRIBE with the decision to send them, so a channel's last
    # subscriber leaving and a new one arriving cannot reach Redis in the wrong order.
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    task: asyncio.Task[None] | None = None


class RedisSubscription(QueuedSubscription):
    def __init__(self, bus: RedisBus, listener: _Listener, channel: str, max_queue: int) -> None:
        super().__init__(channel, max_queue)
        self._bus = bus
        self._listener = listener

    async def close(self) -> None:
        if self.closed:
            return
        self.end()
        await self._bus._unsubscribe(self._listener, self)


class RedisBus(Bus):
    def __init__(self, *, prefix: str = "mcp", max_queue: int = 10000, redis: RedisOptions | None = None,
                 **options: Any) -> None:
        connection = RedisOptions.take(redis, options)  # flat connection keys too (url=, ...)
        super().__init__(**options)
        self.prefix = check_prefix(prefix)
        self.max_queue = max_queue
        self.socket_timeout = connection.socket_timeout
        self._redis = RedisConnector(connection)
        self._listeners: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Listener] = (
            weakref.WeakKeyDictionary()
        )

    def _channel(self, channel: str) -> str:
        return f"{self.prefix}:{channel}"

    async def publish(self, channel: str, message: dict[str, Any]) -> None:
        payload = json.dumps(message)
        with unavailable_as_store_error():
            await (await self._redis.ready_client()).publish(self._channel(channel), payload)

    def publish_sync(self, channel: str, message: dict[str, Any]) -> None:
        payload = json.dumps(message)
        with unavailable_as_store_error():
            self._redis.sync_client().publish(self._channel(channel), payload)

    def _listener(self) -> _Listener:
        loop = asyncio.get_running_loop()
        listener = self._listeners.get(loop)
        if listener is None:
            listener = self._listeners[loop] = _Listener(self._redis.client().pubsub())
        if listener.task is None or listener.task.done():
            listener.task = loop.create_task(self._read(listener), name="mcp-redis-bus-reader")
        return listener

    async def subscribe(self, channel: str) -> Subscription:
        # On a Cluster, ClusterPubSub places its connection by the slot map but does not load it.
        await self._redis.ready_client()
        listener = self._listener()
        name = self._channel(channel)
        sub = RedisSubscription(self, listener, name, self.max_queue)
        confirmed: asyncio.Future[None] | None = None
        first = False
        try:
            async with listener.lock:
                first = name not in listener.subs
                listener.subs.setdefault(name, set()).add(sub)
                if first:
                    confirmed = asyncio.get_running_loop().create_future()
                    queue = listener.waiting.setdefault(name, deque())
                    queue.append(confirmed)
                    with unavailable_as_store_error():
                        await listener.pubsub.subscribe(name)
                    listener.wake.set()
                elif listener.waiting.get(name):
                    # Another local subscriber's SUBSCRIBE is still unconfirmed: wait for it too.
                    confirmed = listener.waiting[name][-1]
            if confirmed is not None:
                await asyncio.wait_for(asyncio.shield(confirmed), self.socket_timeout)
        except (StoreUnavailable, TimeoutError) as exc:
            pending = listener.waiting.get(name)
            if first and pending is not None and confirmed is not None and confirmed in pending:
                pending.remove(confirmed)
            await sub.close()
            if isinstance(exc, StoreUnavailable):
                raise
            raise StoreUnavailable(f"Redis did not confirm SUBSCRIBE {name}") from exc
        except BaseException:
            await sub.close()
            raise
        return sub

    async def _unsubscribe(self, listener: _Listener, sub: RedisSubscription) -> None:
        async with listener.lock:
            subs = listener.subs.get(sub.channel)
            if subs is None:
                return
            subs.discard(sub)
            if not subs:
                del listener.subs[sub.channel]
                # Best effort: if Redis is down the channel is dropped on reconnect or its
                # messages are discarded for want of subscribers.
                with contextlib.suppress(*UNAVAILABLE):
                    await listener.pubsub.unsubscribe(sub.channel)

    async def _read(self, listener: _Listener) -> None:
        backoff = 0.05
        failures = 0
        while True:
            if not listener.pubsub.subscribed:
                listener.wake.clear()
                await listener.wake.wait()
                continue
            try:
                message = await listener.pubsub.get_message(timeout=1.0)
            except UNAVAILABLE as exc:
                logger.warning("Redis bus reader lost its connection (%s); reconnecting", exc)
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 2.0)
                failures += 1
                if self._redis.cluster and failures >= MOVE_AFTER_FAILURES:
                    failures = 0
                    await self._move(listener)
                continue
            except Exception:  # keep reading: one bad frame must not deafen the worker
                logger.exception("Redis bus reader failed; continuing")
                await asyncio.sleep(backoff)
                continue
            raise_pending_cancel()  # close() cancels this task; see raise_pending_cancel
            if backoff > 0.05 or failures:
                # Reading again after a lost connection: whatever was published meanwhile is
                # gone (pub/sub keeps no history), so tell every subscriber to catch up.
                for subs in list(listener.subs.values()):
                    for sub in list(subs):
                        sub.deliver(RESYNC_PAYLOAD)
            backoff, failures = 0.05, 0
            if message is None:
                continue
            kind, name = message["type"], message["channel"]
            if kind == "subscribe":
                self._confirm(listener, name)
            elif kind == "message":
                for sub in list(listener.subs.get(name, ())):
                    sub.deliver(message["data"])

    async def _move(self, listener: _Listener) -> None:
        """Cluster: the node of this pub/sub connection stays unreachable (failed over, gone);
        subscribe every channel again on a new connection, placed by a freshly read slot map.
        Messages published meanwhile are lost (at-most-once). Tries until it succeeds."""
        backoff = 0.05
        while True:
            client = self._redis.client()
            with contextlib.suppress(*UNAVAILABLE):
                await client.nodes_manager.initialize()  # type: ignore[union-attr]  # cluster only
            async with listener.lock:
                old, listener.pubsub = listener.pubsub, client.pubsub()
                with contextlib.suppress(Exception):
                    await old.aclose()  # type: ignore[no-untyped-call]
                channels = list(listener.subs)
                if not channels:
                    return
                try:
                    await listener.pubsub.subscribe(*channels)
                    return
                except UNAVAILABLE as exc:
                    logger.warning("Redis bus could not move its subscriptions (%s); retrying", exc)
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, 2.0)

    @staticmethod
    def _confirm(listener: _Listener, name: str) -> None:
        # After a reconnect redis-py re-subscribes every channel: those confirmations resolve
        # nothing pending or a SUBSCRIBE that was in flight, which the server now honours too.
        queue = listener.waiting.get(name)
        while queue:
            fut = queue.popleft()
            if not fut.done():
                fut.set_result(None)
                break
        if queue is not None and not queue:
            del listener.waiting[name]

    async def close(self) -> None:
        loop = asyncio.get_running_loop()
        listener = self._listeners.pop(loop, None)
        self._listeners.clear()
        if listener is not None:
            for subs in list(listener.subs.values()):
                for sub in list(subs):
                    sub.end()
            listener.subs.clear()
            if listener.task is not None:
                listener.task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await listener.task
            with contextlib.suppress(*UNAVAILABLE):
                await listener.pubsub.aclose()  # type: ignore[no-untyped-call]
        await self._redis.close()
