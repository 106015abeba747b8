"""The ``RateLimiter`` contract (``mcp_protocol/auth/limits.py``), on memory and on real Redis (one
server, Cluster, Sentinel): a bucket of N allows N takes and refuses the next with the wait until
one token is back; several buckets are taken all or none; buckets refill at their rate; two
instances (two workers) share the buckets on Redis."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from mcp_protocol.auth.limits import MemoryRateLimiter, RateLimiter, RedisRateLimiter
from mcp_protocol.auth.principal import Rate
from tests.support.polling import eventually

from .conftest import _factory


@pytest.fixture
async def make_limiter(backend: str, prefix: str,
                       redis_options: dict[str, Any]) -> AsyncIterator[Callable[..., RateLimiter]]:
    make, built = _factory(backend, prefix, MemoryRateLimiter, RedisRateLimiter, redis_options)
    yield make
    for limiter in built:
        await limiter.close()


async def test_a_bucket_allows_its_capacity_then_says_how_long_to_wait(
    make_limiter: Callable[..., RateLimiter]
) -> None:
    limiter = make_limiter()
    rate = Rate(3, 3 / 60)  # 3 a minute: one token back every 20 s
    assert [await limiter.take("p", [("all", rate)]) for _ in range(3)] == [0.0, 0.0, 0.0]
    wait = await limiter.take("p", [("all", rate)])
    assert 19.0 < wait <= 20.0
    assert await limiter.take("q", [("all", rate)]) == 0.0  # another principal, another bucket


async def test_buckets_are_taken_all_or_none(make_limiter: Callable[..., RateLimiter]) -> None:
    limiter = make_limiter()
    wide, narrow = Rate(10, 1.0), Rate(1, 0.01)
    assert await limiter.take("p", [("all", wide), ("tool:x", narrow)]) == 0.0
    assert await limiter.take("p", [("all", wide), ("tool:x", narrow)]) > 0
    # The refused call took nothing from the wide bucket: 9 tokens are left in it.
    assert [await limiter.take("p", [("all", wide)]) for _ in range(9)] == [0.0] * 9
    assert await limiter.take("p", [("all", wide)]) > 0


async def test_a_bucket_refills_at_its_rate(make_limiter: Callable[..., RateLimiter]) -> None:
    limiter = make_limiter()
    rate = Rate(1, 20.0)  # one token every 50 ms
    assert await limiter.take("p", [("all", rate)]) == 0.0

    async def allowed() -> bool:
        return await limiter.take("p", [("all", rate)]) == 0.0

    await eventually(allowed, 2.0)


async def test_two_workers_share_the_buckets(backend: str, make_limiter: Callable[..., RateLimiter]) -> None:
    first, second = make_limiter(), make_limiter()
    rate = Rate(2, 2 / 3600)
    assert await first.take("p", [("all", rate)]) == 0.0
    assert await second.take("p", [("all", rate)]) == 0.0
    assert await first.take("p", [("all", rate)]) > 0
    assert await second.take("p", [("all", rate)]) > 0
