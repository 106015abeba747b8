"""Backends for the contract suites: every test runs on memory, on the real Redis (one server),
on a Redis Cluster and through Sentinel.

``make_*`` fixtures return a factory standing for "a worker's instance": for Redis each call builds
a new instance (a separate worker sharing the Redis, under a key prefix unique to the test and
deleted afterwards); for memory there is only one process, so every call returns the same
instance for the same options. The Cluster (three masters) and the Sentinel setup (a master, its
replica and one Sentinel) are private servers started once per test session, on first use, and
skipped without ``redis-server``.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest

from mcp_protocol.bus.base import Bus
from mcp_protocol.bus.memory import MemoryBus
from mcp_protocol.bus.redis import RedisBus
from mcp_protocol.redis_client.topology import RedisTopology
from mcp_protocol.stores.claims import ClaimStore
from mcp_protocol.stores.events import EventStore
from mcp_protocol.stores.memory import MemoryEventStore, MemorySessionStore, MemoryTaskStore
from mcp_protocol.stores.redis import RedisEventStore, RedisSessionStore, RedisTaskStore
from mcp_protocol.stores.sessions import SessionStore
from mcp_protocol.stores.tasks import TaskStore
from tests.support.private_redis import have_redis_server
from tests.support.redis_topologies import PrivateCluster, PrivateSentinel

REDIS_URL = os.environ.get("MCP_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
BACKENDS = ["memory", "redis", "cluster", "sentinel"]

@pytest.fixture(scope="session")
def redis_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrivateCluster]:
    if not have_redis_server():
        pytest.skip("needs redis-server and redis-cli")
    cluster = PrivateCluster(tmp_path_factory.mktemp("cluster")).start()
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="session")
def redis_sentinel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrivateSentinel]:
    if not have_redis_server():
        pytest.skip("needs redis-server and redis-cli")
    sentinel = PrivateSentinel(tmp_path_factory.mktemp("sentinel")).start()
    try:
        yield sentinel
    finally:
        sentinel.stop()


@pytest.fixture
def redis_options(backend: str, request: pytest.FixtureRequest) -> dict[str, Any]:
    """What settings would pass a Redis backend to reach this test's Redis (empty for memory)."""
    if backend == "cluster":
        cluster: PrivateCluster = request.getfixturevalue("redis_cluster")
        return {"url": cluster.url, "mode": "cluster"}
    if backend == "sentinel":
        sentinel: PrivateSentinel = request.getfixturevalue("redis_sentinel")
        return {"url": sentinel.url, "mode": "sentinel", "sentinels": sentinel.sentinels,
                "sentinel_master": sentinel.master_name}
    return {"url": REDIS_URL} if backend == "redis" else {}


@pytest.fixture
def prefix(redis_options: dict[str, Any]) -> Iterator[str]:
    value = f"mcptest-{secrets.token_hex(6)}"
    yield value
    if not redis_options:
        return
    topology = RedisTopology.from_options(**redis_options)
    client = topology.sync_client(socket_timeout=5.0)
    try:
        # One DEL per key: on a Cluster the keys of a test live in many slots.
        for key in list(client.scan_iter(match=f"*{value}*", count=1000)):
            client.delete(key)
    finally:
        client.close()


def _factory(backend: str, prefix: str, memory_cls: type, redis_cls: type,
             redis_options: dict[str, Any]) -> tuple[Callable[..., Any], list[Any]]:
    built: list[Any] = []
    shared: dict[str, Any] = {}

    def make(**options: Any) -> Any:
        if backend == "memory":
            key = repr(sorted(options.items()))
            if key not in shared:
                shared[key] = memory_cls(**options)
                built.append(shared[key])
            return shared[key]
        instance = redis_cls(prefix=prefix, **redis_options, **options)
        built.append(instance)
        return instance

    return make, built


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
async def make_session_store(backend: str, prefix: str,
                             redis_options: dict[str, Any]) -> AsyncIterator[Callable[..., SessionStore]]:
    make, built = _factory(backend, prefix, MemorySessionStore, RedisSessionStore, redis_options)
    yield make
    for store in built:
        await store.close()


@pytest.fixture
async def make_event_store(backend: str, prefix: str,
                           redis_options: dict[str, Any]) -> AsyncIterator[Callable[..., EventStore]]:
    make, built = _factory(backend, prefix, MemoryEventStore, RedisEventStore, redis_options)
    yield make
    for store in built:
        await store.close()


@pytest.fixture
async def make_task_store(backend: str, prefix: str,
                          redis_options: dict[str, Any]) -> AsyncIterator[Callable[..., TaskStore]]:
    make, built = _factory(backend, prefix, MemoryTaskStore, RedisTaskStore, redis_options)
    yield make
    for store in built:
        await store.close()


@pytest.fixture
def make_claim_store(make_event_store: Callable[..., EventStore]) -> Callable[[], ClaimStore]:
    """A worker's claim store: its event store's ``claims`` (closed with the event store)."""
    return lambda: make_event_store().claims


@pytest.fixture
async def make_bus(backend: str, prefix: str,
                   redis_options: dict[str, Any]) -> AsyncIterator[Callable[..., Bus]]:
    make, built = _factory(backend, prefix, MemoryBus, RedisBus, redis_options)
    yield make
    for bus in built:
        await bus.close()
