"""Backend options (mcp_protocol/options.py, redis_client/options.py): one owner of the Redis
connection options, and a misspelt option refused with its name, by the constructor and by the
system check, instead of vanishing into ``**options``."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import override_settings

from access.drain import Drain
from access.spool import RedisSpoolSink
from mcp_django.checks import check_mcp_settings
from mcp_django.conf import build_backend
from mcp_protocol.auth.limits import MemoryRateLimiter, RedisRateLimiter
from mcp_protocol.bus.memory import MemoryBus
from mcp_protocol.bus.redis import RedisBus
from mcp_protocol.options import UnknownOption
from mcp_protocol.redis_client.options import RedisOptions
from mcp_protocol.stores.memory import MemoryEventStore, MemorySessionStore, MemoryTaskStore
from mcp_protocol.stores.redis import RedisEventStore, RedisSessionStore, RedisTaskStore

URL = "redis://127.0.0.1:6379/0"  # nothing connects: clients are made on first use
REDIS_BACKENDS = [RedisSessionStore, RedisEventStore, RedisTaskStore, RedisBus, RedisRateLimiter,
                  RedisSpoolSink, Drain]
MEMORY_BACKENDS = [MemorySessionStore, MemoryEventStore, MemoryTaskStore, MemoryBus, MemoryRateLimiter]


@pytest.mark.parametrize("cls", REDIS_BACKENDS, ids=lambda cls: cls.__name__)
def test_a_redis_backend_refuses_a_misspelt_option_naming_it_and_the_known_ones(cls: Any) -> None:
    with pytest.raises(UnknownOption) as raised:
        cls(url=URL, prefix="unit", sockettimeout=2.0)
    message = str(raised.value)
    assert cls.__name__ in message and "'sockettimeout'" in message
    # The known keys: the backend's own and the connection's (RedisOptions is their one owner).
    assert "prefix" in raised.value.known and "socket_timeout" in raised.value.known
    assert "health_check_interval" in raised.value.known and "redis" not in raised.value.known


@pytest.mark.parametrize("cls", MEMORY_BACKENDS, ids=lambda cls: cls.__name__)
def test_a_memory_backend_refuses_an_option_it_does_not_take(cls: Any) -> None:
    with pytest.raises(UnknownOption, match="'url'"):
        cls(url=URL)


def test_the_connection_options_are_built_once_and_handed_down_to_the_connector() -> None:
    options = {"url": URL, "prefix": "unit", "socket_timeout": 2.0, "sentinels": "a:1, b:2",
               "max_connections": 7}
    bus = build_backend(RedisBus, options)
    limiter = build_backend(RedisRateLimiter, options)
    expected = RedisOptions(url=URL, socket_timeout=2.0, sentinels=("a:1", " b:2"), max_connections=7)
    assert bus._redis.options == expected == limiter._redis.options
    assert bus.prefix == "unit" and bus.socket_timeout == 2.0
    assert options["url"] == URL  # the settings' dict is not consumed


def test_flat_connection_keys_lay_over_a_given_redis_options() -> None:
    store = RedisEventStore(redis=RedisOptions(url=URL, socket_timeout=3.0), block_ms=500, socket_timeout=4.0)
    assert store._redis.options.socket_timeout == 4.0 and store._redis.options.url == URL


def checks(mcp: dict[str, Any]) -> list[Any]:
    with override_settings(MCP=mcp):
        return [m for m in check_mcp_settings() if m.id == "mcp.E012"]


def test_the_system_check_names_a_misspelt_store_option_and_the_known_ones() -> None:
    [error] = checks({"SESSION_STORE": {"BACKEND": "mcp_protocol.stores.redis.RedisSessionStore",
                                        "OPTIONS": {"url": URL, "sentinel_mater": "m"}}})
    assert "MCP['SESSION_STORE']['OPTIONS']" in error.msg and "'sentinel_mater'" in error.msg
    assert "sentinel_master" in (error.hint or "")


def test_the_system_check_names_a_misspelt_rate_limiter_option() -> None:
    limiter = {"BACKEND": "mcp_protocol.auth.limits.RedisRateLimiter", "OPTIONS": {"urll": URL}}
    [error] = checks({"ACCESS": {"RATE_LIMITER": limiter}})
    assert "RATE_LIMITER" in error.msg and "'urll'" in error.msg


def test_the_system_check_names_a_misspelt_audit_spool_option() -> None:
    [error] = checks({"ACCESS": {"AUDIT_SINK": "access.spool.RedisSpoolSink",
                                 "AUDIT_SINK_OPTIONS": {"url": URL, "max_entrys": 5}}})
    assert "AUDIT_SINK_OPTIONS" in error.msg and "'max_entrys'" in error.msg


def test_the_system_check_passes_the_project_s_redis_options() -> None:
    redis = {"url": URL, "prefix": "mcp", "mode": "standalone", "sentinels": [],
             "sentinel_master": "mymaster", "sentinel_password": None}
    mcp = {key: {"BACKEND": path, "OPTIONS": dict(redis)} for key, path in [
        ("SESSION_STORE", "mcp_protocol.stores.redis.RedisSessionStore"),
        ("EVENT_STORE", "mcp_protocol.stores.redis.RedisEventStore"),
        ("BUS", "mcp_protocol.bus.redis.RedisBus"),
        ("TASK_STORE", "mcp_protocol.stores.redis.RedisTaskStore"),
    ]}
    mcp["ACCESS"] = {"RATE_LIMITER": {"BACKEND": "mcp_protocol.auth.limits.RedisRateLimiter",
                                      "OPTIONS": dict(redis)},
                     "AUDIT_SINK": "access.spool.RedisSpoolSink",
                     "AUDIT_SINK_OPTIONS": {**redis, "max_entries": 10}}
    assert checks(mcp) == []
