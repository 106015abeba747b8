"""Keeping upstreams current (issue 40 item 3): the listen-stream lease (one keeper of several holds
an upstream; another takes it over when the holder's lease lapses), the debounced sync on the
upstream's ``list_changed``, and the circuit breaker writing health. Against an upstream of the
official Python SDK on loopback whose tool list changes at runtime, and the real database."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator

import pytest
from asgiref.sync import sync_to_async
from django.conf import settings
from django.test import override_settings
from prometheus_client import REGISTRY

from mcp_protocol.stores.memory.claims import MemoryClaimStore
from registry.models import Tool, Upstream
from registry.upstreams import breaker, health
from registry.upstreams.keeper import Keeper, lease_key
from tests.support.changing_upstream import ChangingUpstream
from tests.support.polling import eventually, unlocked

pytestmark = pytest.mark.django_db(transaction=True)
MEMORY_BUS = {"BACKEND": "mcp_protocol.bus.memory.MemoryBus", "OPTIONS": {}}
LEASE = 1.5


@pytest.fixture(autouse=True)
def loopback_allowed() -> Iterator[None]:
    bus = {**settings.MCP, "BUS": MEMORY_BUS}
    with override_settings(REGISTRY_HTTP_ALLOWED_HOSTS=["127.0.0.1"], MCP=bus):
        yield


@pytest.fixture(scope="module")
def up() -> Iterator[ChangingUpstream]:
    # A process serving SSE: subscriptions/listen is a stream (the in-thread SdkUpstream answers JSON).
    with ChangingUpstream() as server:
        yield server


def _row(url: str) -> Upstream:
    return Upstream.objects.create(name="changing", prefix="ch", url=url, transport="streamable-http",
                                   timeout=5, connect_timeout=2, sync_interval=0)


def _served() -> set[str]:
    served = Tool.objects.filter(upstream__isnull=False, upstream_missing=False)
    return set(served.values_list("name", flat=True))


async def _tools() -> set[str]:
    return await sync_to_async(_served)()


@pytest.fixture
async def keepers() -> AsyncIterator[list[Keeper]]:
    made: list[Keeper] = []
    yield made
    for keeper in made:
        await keeper.stop()


async def test_one_keeper_holds_the_stream_and_another_takes_over_when_its_lease_lapses(
    up: ChangingUpstream, keepers: list[Keeper]
) -> None:
    row = await sync_to_async(_row)(up.url)
    claims = MemoryClaimStore()  # the store every worker shares (Redis in production)
    first, second = (Keeper(claims, lease=LEASE, debounce=0.05, tick=0.05, gap=0.0) for _ in range(2))
    keepers += [first, second]
    held = await asyncio.gather(first.check(), second.check())
    assert sorted(held, key=len) == [set(), {row.pk}]
    holder, other = (first, second) if held[0] else (second, first)
    await asyncio.gather(first.start(), second.start())
    await eventually(unlocked(lambda: _has("ch_grow")), 10.0, step=0.05)  # synced when its stream opened
    # The holder dies without a word: its looks and renewals stop, its lease is left to lapse.
    assert holder._task is not None
    holder._task.cancel()
    for task in holder.holds.pop(row.pk).tasks:
        task.cancel()
    await eventually(lambda: _holds(other, row.pk), LEASE * 4, step=0.05)
    # The new holder's stream carries the upstream's next change.
    await up.call("grow", name="later")
    await eventually(unlocked(lambda: _has("ch_later")), 10.0, step=0.05)


async def test_a_burst_of_list_changed_is_one_sync_and_a_removal_is_synced(
    up: ChangingUpstream, keepers: list[Keeper]
) -> None:
    row = await sync_to_async(_row)(up.url)
    keeper = Keeper(MemoryClaimStore(), lease=5.0, debounce=0.3, tick=0.05, gap=0.0)
    keepers.append(keeper)
    assert await keeper.check() == {row.pk}
    hold = keeper.holds[row.pk]
    await eventually(lambda: _at_least(hold.syncs, 1), 10.0, step=0.05)
    for _ in range(5):
        hold.changed("tools")
    await eventually(lambda: _at_least(hold.syncs, 2), 5.0, step=0.05)
    assert not hold.dirty.is_set()  # the five were one sync
    assert hold.syncs == 2
    await up.call("grow", name="extra")
    await eventually(unlocked(lambda: _has("ch_extra")), 10.0, step=0.05)
    await up.call("shrink", name="extra")
    await eventually(unlocked(lambda: _has("ch_extra", present=False)), 10.0, step=0.05)
    assert "ch_echo" in await _tools()


async def test_disabling_an_upstream_ends_its_hold_and_releases_the_lease(
    up: ChangingUpstream, keepers: list[Keeper]
) -> None:
    row = await sync_to_async(_row)(up.url)
    claims = MemoryClaimStore()
    keeper = Keeper(claims, lease=5.0, debounce=0.05, tick=0.05)
    keepers.append(keeper)
    assert await keeper.check() == {row.pk}
    await eventually(lambda: _listening(1.0), 10.0, step=0.05)  # on /metrics: the stream is open
    await sync_to_async(Upstream.objects.filter(pk=row.pk).update)(enabled=False)
    keeper._rows_at = -1e9  # the rows are read again at this look, not in ROWS_EVERY seconds
    assert await keeper.check() == set()
    assert await claims.claim_stream(lease_key(row.pk), "someone else", 5.0)
    assert await _listening(0.0)


def test_a_breaker_opening_writes_health_down_with_the_reason_and_closing_writes_up() -> None:
    Upstream.objects.create(name="flaky", prefix="fl", url="http://127.0.0.1:9/mcp", health="up")
    health.watch_breakers()
    health.watch_breakers()  # once per process, however many loops start
    assert breaker.listeners.count(health.breaker_listener) == 1
    guard = breaker.Breaker("flaky", failures=2, cool=60)
    guard.failed("connection refused")
    assert Upstream.objects.get(name="flaky").health == "up"  # one failure: still closed
    guard.failed("connection refused")
    row = Upstream.objects.get(name="flaky")
    assert (row.health, row.health_detail) == ("down", "circuit open: connection refused")
    guard.succeeded()
    row = Upstream.objects.get(name="flaky")
    assert (row.health, row.health_detail) == ("up", "")


def test_a_closing_breaker_leaves_a_syncs_degraded_verdict_alone() -> None:
    Upstream.objects.create(name="partial", prefix="pa", url="http://127.0.0.1:9/mcp", health="degraded",
                            health_detail="tools: a page failed")
    health.from_breaker("partial", breaker.CLOSED, "a call succeeded")
    assert Upstream.objects.get(name="partial").health == "degraded"


async def _has(name: str, *, present: bool = True) -> bool:
    return (name in await _tools()) == present


async def _holds(keeper: Keeper, pk: int) -> bool:
    return pk in keeper.holds


async def _listening(value: float) -> bool:
    return REGISTRY.get_sample_value("mcp_upstream_listening", {"upstream": "changing"}) == value


async def _at_least(value: int, least: int) -> bool:
    return value >= least
