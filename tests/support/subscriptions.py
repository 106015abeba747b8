"""Reading what a bus subscription or an event store's ``listen`` yields: the next message (a
backend's ``RESYNC`` after a reconnect skipped), the next event, the next ``n`` events within a
deadline. Shared by the contract suites and the Redis fault and Cluster tests."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, TypeVar

from mcp_protocol.bus.base import RESYNC, Subscription
from mcp_protocol.stores.events import Event

from .polling import within

T = TypeVar("T")


async def anext_message(sub: Subscription) -> dict[str, Any]:
    """The next published message (a backend's RESYNC after a reconnect is skipped)."""
    async for message in sub:
        if message != RESYNC:
            return message
    raise AssertionError("subscription ended")


async def anext_event(events: Any) -> Any:
    """The next event of a ``listen``, with no deadline of its own (the caller's ``within``)."""
    async for event in events:
        return event
    raise AssertionError("listen ended")


async def take(items: AsyncIterator[T], n: int, seconds: float = 5.0) -> list[T]:
    """The next ``n`` items (events of a ``listen``, messages of a subscription), within a deadline."""

    async def collect() -> list[T]:
        got: list[T] = []
        async for item in items:
            got.append(item)
            if len(got) == n:
                break
        return got

    return await within(collect(), seconds)


async def first(events: AsyncIterator[Event]) -> Event:
    return (await take(events, 1))[0]
