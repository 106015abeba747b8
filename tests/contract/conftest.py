"""Backends for the contract suites: every test runs once on memory and once on the real Redis.

``make_*`` fixtures return a factory standing for "a worker's instance": for Redis each call builds
a new instance (a separate worker sharing the Redis, under a key prefix unique to the test and
deleted afterwards); for memory there is only one process, so every call returns the same
instance for the same options.
"""

from __future__ import annotations

import asyncio
import os
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any, TypeVar

import pytest
import redis

from mcp_protocol.bus.base import Bus
from mcp_protocol.bus.memory import MemoryBus
from mcp_protocol.bus.redis import RedisBus
from mcp_protocol.stores.base import EventStore, SessionStore
from mcp_protocol.stores.memory import MemoryEventStore, MemorySessionStore
from mcp_protocol.stores.redis import RedisEventStore, RedisSessionStore

REDIS_URL = os.environ.get("MCP_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
BACKENDS = ["memory", "redis"]

T = TypeVar("T")


async def within(awaitable: Awaitable[T], seconds: float = 5.0) -> T:
    """Every wait has a deadline."""
    return await asyncio.wait_for(awaitable, seconds)


async def eventually(check: Callable[[], Awaitable[bool]], seconds: float = 5.0, step: float = 0.02) -> None:
    """Poll ``check`` until true; fail at the deadline (for expiry, where no event exists)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while not await check():
        if loop.time() > deadline:
            raise AssertionError(f"condition not met within {seconds} s")
        await asyncio.sleep(step)


@pytest.fixture
def prefix() -> Iterator[str]:
    value = f"mcptest-{secrets.token_hex(6)}"
    yield value
    client = redis.Redis.from_url(REDIS_URL)
    try:
        keys = list(client.scan_iter(match=f"*{value}*", count=1000))
        if keys:
            client.delete(*keys)
    finally:
        client.close()


def _factory(backend: str, prefix: str, memory_cls: type,
             redis_cls: type) -> tuple[Callable[..., Any], list[Any]]:
    built: list[Any] = []
    shared: dict[str, Any] = {}

    def make(**options: Any) -> Any:
        if backend == "memory":
            key = repr(sorted(options.items()))
            if key not in shared:
                shared[key] = memory_cls(**options)
                built.append(shared[key])
            return shared[key]
        instance = redis_cls(url=REDIS_URL, prefix=prefix, **options)
        built.append(instance)
        return instance

    return make, built


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
async def make_session_store(backend: str, prefix: str) -> AsyncIterator[Callable[..., SessionStore]]:
    make, built = _factory(backend, prefix, MemorySessionStore, RedisSessionStore)
    yield make
    for store in built:
        await store.close()


@pytest.fixture
async def make_event_store(backend: str, prefix: str) -> AsyncIterator[Callable[..., EventStore]]:
    make, built = _factory(backend, prefix, MemoryEventStore, RedisEventStore)
    yield make
    for store in built:
        await store.close()


@pytest.fixture
async def make_bus(backend: str, prefix: str) -> AsyncIterator[Callable[..., Bus]]:
    make, built = _factory(backend, prefix, MemoryBus, RedisBus)
    yield make
    for bus in built:
        await bus.close()
