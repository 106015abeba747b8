"""Rate limits: token buckets per principal and per (principal, tool), and a cap on requests in
flight per principal.

``RateLimiter.take(buckets)`` takes one token from each bucket, all or none, and answers 0.0
(allowed) or how many seconds until the call would be allowed. Backends, chosen by settings:

- ``MemoryRateLimiter``: this process only (one worker, stdio, tests).
- ``RedisRateLimiter``: every worker shares the buckets; one round trip (``TAKE``, a Lua script
  that reads Redis' own clock, so workers with skewed clocks agree). A principal's buckets share
  one hash tag, so on a Cluster the script touches one slot.

``InFlight`` counts a principal's running requests on this worker (a per-worker cap: a counter in
Redis would leak slots when a worker dies mid-request).
"""

from __future__ import annotations

import hashlib
import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

from ..options import refuse_leftover
from ..redis_client.connection import RedisConnector, unavailable_as_store_error
from ..redis_client.options import RedisOptions
from .principal import Rate

Bucket = tuple[str, Rate]  # (name, rate); names are unique per principal


class RateLimiter(ABC):
    strict_options = True  # an option no class of the backend takes is refused (options.py)

    def __init__(self, **options: Any) -> None:
        refuse_leftover(self, options)

    @abstractmethod
    async def take(self, principal: str, buckets: Sequence[Bucket]) -> float:
        """One token from each bucket of ``principal`` (all or none): 0.0, or seconds to wait."""

    async def close(self) -> None:  # noqa: B027 (optional hook)
        pass


def _refill(level: float, stamp: float, now: float, rate: Rate) -> float:
    return min(float(rate.capacity), level + max(0.0, now - stamp) * rate.per_second)


class MemoryRateLimiter(RateLimiter):
    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self._buckets: dict[tuple[str, str], tuple[float, float]] = {}

    async def take(self, principal: str, buckets: Sequence[Bucket]) -> float:
        now = time.monotonic()
        levels = []
        wait = 0.0
        for name, rate in buckets:
            level, stamp = self._buckets.get((principal, name), (float(rate.capacity), now))
            level = _refill(level, stamp, now, rate)
            levels.append(level)
            if level < 1.0:
                wait = max(wait, (1.0 - level) / rate.per_second)
        if wait > 0:
            return wait
        for (name, _), level in zip(buckets, levels, strict=True):
            self._buckets[(principal, name)] = (level - 1.0, now)
        if len(self._buckets) > 100_000:  # full buckets carry no information: forget them
            self._buckets = {k: v for k, v in self._buckets.items() if now - v[1] < 3600}
        return 0.0


# KEYS: one hash per bucket. ARGV: capacity_1, per_second_1, capacity_2, ... Each hash holds
# the level (l) and the time of the last take in microseconds (t). Returns 0 or the wait in µs.
TAKE = """
local now = redis.call('TIME')
now = tonumber(now[1]) * 1000000 + tonumber(now[2])
local levels, wait = {}, 0
for i, key in ipairs(KEYS) do
  local capacity, rate = tonumber(ARGV[2*i-1]), tonumber(ARGV[2*i])
  local state = redis.call('HMGET', key, 'l', 't')
  local level = tonumber(state[1]) or capacity
  local stamp = tonumber(state[2]) or now
  level = math.min(capacity, level + math.max(0, now - stamp) * rate / 1000000)
  levels[i] = level
  if level < 1 then wait = math.max(wait, math.ceil((1 - level) / rate * 1000000)) end
end
if wait > 0 then return wait end
for i, key in ipairs(KEYS) do
  local capacity, rate = tonumber(ARGV[2*i-1]), tonumber(ARGV[2*i])
  redis.call('HSET', key, 'l', tostring(levels[i] - 1), 't', tostring(now))
  redis.call('PEXPIRE', key, math.ceil(capacity / rate * 1000) + 1000)
end
return 0
"""
TAKE_SHA = hashlib.sha1(TAKE.encode()).hexdigest()


class RedisRateLimiter(RateLimiter):
    def __init__(self, *, prefix: str = "mcp", redis: RedisOptions | None = None, **options: Any) -> None:
        connection = RedisOptions.take(redis, options)  # flat connection keys too (url=, ...)
        super().__init__(**options)
        self.prefix = prefix
        self._redis = RedisConnector(connection)

    async def take(self, principal: str, buckets: Sequence[Bucket]) -> float:
        if not buckets:
            return 0.0
        tag = hashlib.sha256(principal.encode()).hexdigest()[:24]
        keys = [f"{self.prefix}:rl:{{{tag}}}:{name}" for name, _ in buckets]
        args: list[Any] = []
        for _, rate in buckets:
            args += [rate.capacity, repr(rate.per_second)]
        with unavailable_as_store_error():
            wait = await self._redis.pipelined().evalsha(TAKE_SHA, TAKE, keys, args)
        if isinstance(wait, Exception):
            raise wait
        return int(wait) / 1_000_000

    async def close(self) -> None:
        await self._redis.close()


class InFlight:
    def __init__(self, limit: int | None) -> None:
        self.limit = limit
        self._running: dict[str | None, int] = {}

    def enter(self, principal: str | None) -> bool:
        count = self._running.get(principal, 0)
        if self.limit is not None and count >= self.limit:
            return False
        self._running[principal] = count + 1
        return True

    def leave(self, principal: str | None) -> None:
        count = self._running.get(principal, 0) - 1
        if count > 0:
            self._running[principal] = count
        else:
            self._running.pop(principal, None)
