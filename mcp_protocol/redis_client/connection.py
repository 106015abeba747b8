"""Redis connections for everything that talks to Redis (stores, bus, rate limits, the audit
spool), and the one place Redis failures become ``StoreUnavailable``.

Owns ``RedisConnector``: a lazily built redis-py asyncio client per running event loop (an
asyncio connection is bound to the loop that opened it; Django's ``async_to_sync`` and test runners
make loops of their own), plus one thread-safe synchronous client for code with no loop
(``Bus.publish_sync`` in a shell or a migration), and per loop one pipelined hot-path client
(``pipelined.PipelinedRedis``, or ``cluster.PipelinedCluster`` on Redis Cluster). Which clients,
for which topology (one server, Cluster, Sentinel), is ``topology.RedisTopology``'s business.
Timeouts are short and each command is retried once on a fresh connection, so a Redis outage is
reported within seconds and the pools reconnect by themselves when Redis returns (under
Sentinel: to whichever master Sentinel names then); nothing is kept aside in memory meanwhile.

``StoreUnavailable`` is the store contract's word for "the backend cannot be reached"
(``store_errors.py``, a module of exceptions only); the bus, the rate limiter and the audit
spool answer with it too, so a transport turns every outage into one 503.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import weakref
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import redis
import redis.asyncio
import redis.asyncio.cluster
import redis.cluster
from redis.asyncio.retry import Retry as AsyncRetry
from redis.backoff import NoBackoff
from redis.retry import Retry as SyncRetry

from .. import tracing
from ..store_errors import StoreUnavailable
from .cluster import REDIRECTS, PipelinedCluster
from .options import RedisOptions
from .pipelined import Pipelined, PipelinedRedis
from .topology import RedisTopology

# The failures that mean "Redis cannot be reached now" (refused, reset, timed out, loading,
# read-only replica after a failover, no master known to Sentinel, a Cluster resharding or failing
# over past our retries); anything else is a bug and propagates as is.
UNAVAILABLE: tuple[type[BaseException], ...] = (
    redis.exceptions.ConnectionError,  # includes Sentinel's MasterNotFoundError
    redis.exceptions.TimeoutError,
    redis.exceptions.BusyLoadingError,
    redis.exceptions.ReadOnlyError,
    redis.exceptions.AskError,  # and MovedError
    redis.exceptions.TryAgainError,
    redis.exceptions.ClusterDownError,  # and MasterDownError
    redis.exceptions.ClusterError,
    redis.exceptions.SlotNotCoveredError,
    ConnectionError,
    TimeoutError,
)



def px(seconds: float) -> int:
    """A duration as the milliseconds of Redis ``PX``/``PEXPIRE`` (at least 1: 0 is an error)."""
    return max(1, int(seconds * 1000))


@contextlib.contextmanager
def unavailable_as_store_error() -> Iterator[None]:
    """Wrap Redis calls: unreachable Redis → ``StoreUnavailable``; a swallowed cancel → re-raised.
    With tracing on, each is a ``redis`` span inside the request's (tracing/)."""
    try:
        with tracing.child("redis", REDIS_SPAN):
            yield
    except UNAVAILABLE as exc:
        raise StoreUnavailable(f"Redis is unavailable: {exc}") from exc
    raise_pending_cancel()


REDIS_SPAN = {"db.system.name": "redis"}  # OpenTelemetry semantic conventions, database spans


def raise_pending_cancel() -> None:
    """Re-raise a cancellation redis-py swallowed.

    redis-py sends each command under ``asyncio.wait_for``, which on Python 3.11 returns the result
    and drops the caller's cancel when both land together (CPython gh-86296, fixed in 3.12); a
    cancelled ``listen`` or bus reader would then loop on forever. The request is still counted by
    ``Task.cancelling()``, so honour it here.
    """
    try:
        task = asyncio.current_task()
    except RuntimeError:  # synchronous caller (publish_sync): nothing to cancel
        return
    if task is not None and task.cancelling():
        raise asyncio.CancelledError


AsyncClient = redis.asyncio.Redis | redis.asyncio.cluster.RedisCluster
SyncClient = redis.Redis | redis.cluster.RedisCluster


class RedisConnector:
    """The clients of one Redis (``options``: where and how to reach it, ``options.py``)."""

    def __init__(self, options: RedisOptions | None = None) -> None:
        self.options = options = options or RedisOptions()
        self.topology = RedisTopology.from_options(
            options.url, mode=options.mode, sentinels=options.sentinels,
            sentinel_master=options.sentinel_master, sentinel_password=options.sentinel_password)
        self.url = self.topology.url
        self.socket_timeout = options.socket_timeout
        self.connect_timeout = options.connect_timeout
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, AsyncClient] = (
            weakref.WeakKeyDictionary()
        )
        self._pipelined: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Pipelined] = (
            weakref.WeakKeyDictionary()
        )
        self._sync: SyncClient | None = None
        # Cluster only: a plain client per (loop, master) for WATCH/MULTI/EXEC (``transaction``).
        self._nodes: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, dict[tuple[str, int], redis.asyncio.Redis]
        ] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    @property
    def cluster(self) -> bool:
        return self.topology.mode == "cluster"

    def _kwargs(self) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "decode_responses": True,
            "socket_timeout": self.socket_timeout,
            "socket_connect_timeout": self.connect_timeout,
        }
        if not self.cluster:
            kwargs["health_check_interval"] = self.options.health_check_interval
        if self.options.max_connections is not None:
            kwargs["max_connections"] = self.options.max_connections
        return kwargs

    def client(self) -> AsyncClient:
        """The client of the running loop, created on first use."""
        loop = asyncio.get_running_loop()
        with self._lock:
            client = self._clients.get(loop)
            if client is None:
                # One retry on a fresh connection: after Redis restarts, the pooled sockets are
                # dead and the first command on each fails; the retry reconnects.
                client = self.topology.async_client(retry=AsyncRetry(NoBackoff(), 1), **self._kwargs())
                self._clients[loop] = client
            return client

    async def ready_client(self) -> AsyncClient:
        """``client()``, on a Cluster with its slot map loaded: redis-py loads it lazily on first
        use, and concurrent first commands then race (one's connection is replaced under it)."""
        client = self.client()
        if isinstance(client, redis.asyncio.cluster.RedisCluster):
            with unavailable_as_store_error():
                try:
                    await client.initialize()
                except redis.exceptions.RedisClusterException as exc:  # no node answered
                    raise redis.exceptions.ConnectionError(str(exc)) from exc
        return client

    def pipelined(self) -> Pipelined:
        """The running loop's pipelined client for the hot-path commands."""
        loop = asyncio.get_running_loop()
        client = self._pipelined.get(loop)
        if client is None:
            with self._lock:
                client = self._pipelined.get(loop)
                if client is None:
                    client = self._pipelined[loop] = self._build_pipelined()
        return client

    def _build_pipelined(self) -> Pipelined:
        timeouts: dict[str, Any] = {"socket_timeout": self.socket_timeout,
                                    "connect_timeout": self.connect_timeout}
        if self.cluster:
            return PipelinedCluster(self.url, **timeouts)
        if self.topology.mode == "sentinel":
            sentinel = self.topology.async_sentinel(self.socket_timeout, self.connect_timeout)
            name = self.topology.sentinel_master

            async def locate() -> tuple[str, int]:  # asked on every connect: follows failovers
                host, port = await sentinel.discover_master(name)
                return str(host), int(port)

            return PipelinedRedis(self.url, locate=locate, **timeouts)
        return PipelinedRedis(self.url, **timeouts)

    async def transaction(self, func: Callable[[Any], Awaitable[None]], key: str) -> None:
        """Run ``func`` as an optimistic transaction (WATCH ``key``, then MULTI/EXEC, again on a
        concurrent write). On a Cluster it runs on a plain client of the key's master: redis-py's
        asyncio ``RedisCluster.transaction`` runs each command on a new event loop in a thread
        and joins it, so with a pooled connection (whose socket belongs to this loop, now
        blocked in the join) it waits forever; seen as a hung contract test under load."""
        client = await self.ready_client()
        if not isinstance(client, redis.asyncio.cluster.RedisCluster):
            await client.transaction(func, key)
            return
        for attempt in range(REDIRECTS):
            node = client.get_node_from_key(key)
            if node is None:
                raise redis.exceptions.ConnectionError(f"no Cluster master holds the slot of {key!r}")
            try:
                await self._node_client(str(node.host), int(node.port)).transaction(func, key)
                return
            except (redis.exceptions.MovedError, redis.exceptions.TryAgainError):
                # The slot moved (resharding, failover) or is migrating: reload the map, retry.
                if attempt == REDIRECTS - 1:
                    raise
                await client.nodes_manager.initialize()

    def _node_client(self, host: str, port: int) -> redis.asyncio.Redis:
        loop = asyncio.get_running_loop()
        with self._lock:
            nodes = self._nodes.setdefault(loop, {})
            node = nodes.get((host, port))
            if node is None:
                # The URL's credentials and TLS; a Cluster has only database 0.
                auth = {k: v for k, v in self.topology.master_options().items() if k != "db"}
                kwargs = self._kwargs() | auth | {"health_check_interval": 0}
                node = nodes[(host, port)] = redis.asyncio.Redis(
                    host=host, port=port, retry=AsyncRetry(NoBackoff(), 1), **kwargs
                )
            return node

    def sync_client(self) -> SyncClient:
        with self._lock:
            if self._sync is None:
                self._sync = self.topology.sync_client(retry=SyncRetry(NoBackoff(), 1), **self._kwargs())
            return self._sync

    async def close(self) -> None:
        """Close the running loop's client; clients of other loops are dropped (their sockets
        belong to loops we cannot await on, and die with them)."""
        loop = asyncio.get_running_loop()
        with self._lock:
            client = self._clients.pop(loop, None)
            self._clients.clear()
            pipelined = self._pipelined.pop(loop, None)
            self._pipelined.clear()
            sync, self._sync = self._sync, None
            nodes = self._nodes.pop(loop, {})
            self._nodes.clear()
        if pipelined is not None:
            pipelined.close()
        if client is not None:
            await client.aclose()
        for node in nodes.values():
            await node.aclose()
        if sync is not None:
            sync.close()
