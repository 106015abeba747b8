"""The machine's shared Redis (127.0.0.1:6379, which scripts/test.sh starts) for server tests:
skip when it is not there, and give each module a key prefix of its own that is deleted
afterwards, so modules running side by side (pytest -n 2) never see each other's keys."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
import redis

REDIS_URL = "redis://127.0.0.1:6379/0"


def require_redis(url: str = REDIS_URL) -> None:
    try:
        redis.Redis.from_url(url, socket_timeout=2).ping()
    except redis.RedisError as exc:  # pragma: no cover - CI starts Redis (scripts/test.sh)
        pytest.skip(f"needs Redis at {url}: {exc}")


def new_prefix(stem: str = "mcptest") -> str:
    return f"{stem}-{uuid.uuid4().hex[:8]}"


def drop_keys(prefix: str, url: str = REDIS_URL) -> None:
    client = redis.Redis.from_url(url)
    try:
        keys = list(client.scan_iter(f"*{prefix}*", count=1000))
        if keys:
            client.delete(*keys)
    finally:
        client.close()


@contextmanager
def redis_prefix(prefix: str | None = None, url: str = REDIS_URL) -> Iterator[str]:
    """Skip without Redis; yield the prefix (a new one unless given); delete its keys on exit."""
    require_redis(url)
    prefix = prefix or new_prefix()
    try:
        yield prefix
    finally:
        drop_keys(prefix, url)
