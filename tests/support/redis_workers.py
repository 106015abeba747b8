"""Two workers' view of one Redis (one server, a Cluster or Sentinel), for the tests that break it:
the first worker's stores and bus, the second worker's bus; what a fault is about to cut (a
session with an event, a subscription that has heard the other worker, a ``listen`` blocked in
XREAD); and the check that a subscription made before the fault carries on after it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from mcp_protocol.bus.base import RESYNC, Subscription
from mcp_protocol.bus.redis import RedisBus
from mcp_protocol.session import Session
from mcp_protocol.stores.redis import RedisEventStore, RedisSessionStore

from .polling import eventually, within
from .subscriptions import anext_event, anext_message

CHANNEL = "changes"


@dataclass
class RedisWorkers:
    sessions: RedisSessionStore
    events: RedisEventStore
    bus: RedisBus
    other_worker: RedisBus


@dataclass
class BeforeTheFault:
    session: Session
    first_event: str  # the id of the session's first event on stream r1
    sub: Subscription  # the first worker's subscription to CHANNEL, live
    blocked: asyncio.Task[Any]  # the next event after ``first_event``, awaited in XREAD


@asynccontextmanager
async def redis_workers(**options: Any) -> AsyncIterator[RedisWorkers]:
    """Stores and buses on ``options`` (what settings would pass a backend), closed afterwards."""
    workers = RedisWorkers(
        RedisSessionStore(**options),
        RedisEventStore(block_ms=200, **options),
        RedisBus(**options),
        RedisBus(**options),
    )
    try:
        yield workers
    finally:
        for closeable in (workers.sessions, workers.events, workers.bus, workers.other_worker):
            await closeable.close()


async def before_the_fault(workers: RedisWorkers, session: Session | None = None) -> BeforeTheFault:
    session = session or Session.create("alice")
    await workers.sessions.create(session)
    first = await workers.events.append(session.id, "r1", {"n": 0})
    sub = await workers.bus.subscribe(CHANNEL)
    await workers.other_worker.publish(CHANNEL, {"n": "before"})
    assert await within(anext_message(sub)) == {"n": "before"}
    blocked = asyncio.create_task(anext_event(workers.events.listen(session.id, "r1", after=first)))
    return BeforeTheFault(session, first, sub, blocked)


async def carries_on(sub: Subscription, publisher: RedisBus, seconds: float) -> list[dict[str, Any]]:
    """``sub`` hears ``publisher`` again once the client re-subscribed (probed by publishing until a
    message arrives), a publish from a thread included; returns what it yielded up to the first
    message, RESYNC markers included."""
    seen: list[dict[str, Any]] = []

    async def next_published() -> dict[str, Any]:
        async for message in sub:
            seen.append(message)
            if message != RESYNC:
                return message
        raise AssertionError("subscription ended")

    receiving = asyncio.create_task(next_published())
    got: list[dict[str, Any]] = []

    async def resubscribed() -> bool:
        await publisher.publish(CHANNEL, {"n": "after"})
        try:
            got.append(await asyncio.wait_for(asyncio.shield(receiving), 0.2))
        except TimeoutError:
            return False
        return True

    await eventually(resubscribed, seconds=seconds, step=0.05)
    assert got == [{"n": "after"}]
    await within(asyncio.to_thread(publisher.publish_sync, CHANNEL, {"n": "sync"}))
    message = await within(anext_message(sub))
    while message == {"n": "after"}:  # a slow probe's copy may still be queued
        message = await within(anext_message(sub))
    assert message == {"n": "sync"}
    return seen
