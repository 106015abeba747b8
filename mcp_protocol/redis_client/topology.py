"""Which Redis the Redis stores, bus, rate limiter and audit spool talk to, and the redis-py
clients that reach it.

Owns ``RedisTopology`` (the ``mode`` option and what goes with it, checked once when a backend
is built) and the client builders ``RedisConnector`` calls per event loop. Three modes, each
through redis-py's own support for it:

    standalone  one server at ``url`` (redis://, rediss://, unix://)         redis.Redis
    cluster     Redis Cluster; ``url`` is any node (a seed: the others are
                learnt from it), database 0 only                              redis.cluster.RedisCluster
    sentinel    the master Sentinel names ``sentinel_master``, asked of
                ``sentinels`` (host:port) on every (re)connect; ``url`` gives
                only the master's credentials, database and TLS               redis.sentinel.Sentinel

The hot-path client follows the same mode: ``pipelined.PipelinedRedis`` (standalone; for Sentinel it asks
Sentinel for the master's address whenever it connects) or ``cluster.PipelinedCluster`` (one
``PipelinedRedis`` per master, commands routed by hash slot).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import redis
import redis.asyncio
import redis.asyncio.cluster
import redis.asyncio.sentinel
import redis.cluster
import redis.sentinel
from redis.asyncio.connection import parse_url

MODES = ("standalone", "cluster", "sentinel")


def check_prefix(prefix: str) -> str:
    """Key prefixes are put inside hash tags (``{P}:live``): a brace would move the tag."""
    if not prefix or "{" in prefix or "}" in prefix:
        raise ValueError(f"Redis key prefix {prefix!r} must be non-empty and contain no braces")
    return prefix


def _address(value: str) -> tuple[str, int]:
    host, sep, port = value.strip().rpartition(":")
    if not sep or not host or not port.isdigit():
        raise ValueError(f"Sentinel address {value!r} is not host:port")
    return host.strip("[]"), int(port)


@dataclass(frozen=True)
class RedisTopology:
    url: str = field(repr=False)  # may hold a password: kept out of logs
    mode: str = "standalone"
    sentinels: tuple[tuple[str, int], ...] = ()
    sentinel_master: str = "mymaster"
    sentinel_password: str | None = field(default=None, repr=False)

    @classmethod
    def from_options(cls, url: str, *, mode: str = "standalone", sentinels: Sequence[str] | str = (),
                     sentinel_master: str = "mymaster",
                     sentinel_password: str | None = None) -> RedisTopology:
        if mode not in MODES:
            raise ValueError(f"Redis mode {mode!r} is not one of {', '.join(MODES)}")
        if isinstance(sentinels, str):
            sentinels = [s for s in sentinels.split(",") if s.strip()]
        addresses = tuple(_address(s) for s in sentinels)
        if mode == "sentinel" and not addresses:
            raise ValueError("Redis mode 'sentinel' needs at least one sentinel address (host:port)")
        if mode == "cluster" and int(parse_url(url).get("db") or 0):
            raise ValueError("Redis Cluster has only database 0")
        return cls(url, mode, addresses, sentinel_master, sentinel_password or None)

    # -- redis-py clients ----------------------------------------------------------------------
    def _sentinel_kwargs(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        own = {k: v for k, v in kwargs.items() if k.startswith("socket_")}
        if self.sentinel_password:
            own["password"] = self.sentinel_password
        return own

    def master_options(self) -> dict[str, Any]:
        """Credentials, database and TLS of the Sentinel-named master, from ``url``."""
        options = parse_url(self.url)
        picked = {k: options[k] for k in ("username", "password", "db") if options.get(k) is not None}
        if self.url.startswith("rediss://"):
            picked["ssl"] = True
        return picked

    def async_client(self, **kwargs: Any) -> redis.asyncio.Redis | redis.asyncio.cluster.RedisCluster:
        if self.mode == "cluster":
            kwargs.pop("retry", None)  # RedisCluster retries redirects and failovers itself
            return redis.asyncio.cluster.RedisCluster.from_url(self.url, **kwargs)
        if self.mode == "sentinel":
            sentinel = redis.asyncio.sentinel.Sentinel(  # type: ignore[no-untyped-call]
                self.sentinels, sentinel_kwargs=self._sentinel_kwargs(kwargs))
            client: redis.asyncio.Redis = sentinel.master_for(
                self.sentinel_master, **self.master_options(), **kwargs)
            return client
        return redis.asyncio.Redis.from_url(self.url, **kwargs)

    def sync_client(self, **kwargs: Any) -> redis.Redis | redis.cluster.RedisCluster:
        if self.mode == "cluster":
            kwargs.pop("retry", None)
            return redis.cluster.RedisCluster.from_url(self.url, **kwargs)
        if self.mode == "sentinel":
            sentinel = redis.sentinel.Sentinel(  # type: ignore[no-untyped-call]
                self.sentinels, sentinel_kwargs=self._sentinel_kwargs(kwargs))
            client: redis.Redis = sentinel.master_for(  # type: ignore[no-untyped-call]
                self.sentinel_master, **self.master_options(), **kwargs)
            return client
        return redis.Redis.from_url(self.url, **kwargs)

    def async_sentinel(self, socket_timeout: float, connect_timeout: float) -> Any:
        """A ``redis.asyncio.sentinel.Sentinel`` for the hot-path client's master look-ups (on its
        own event loop)."""
        timeouts = {"socket_timeout": socket_timeout, "socket_connect_timeout": connect_timeout}
        return redis.asyncio.sentinel.Sentinel(  # type: ignore[no-untyped-call]
            self.sentinels, sentinel_kwargs=self._sentinel_kwargs(timeouts))
