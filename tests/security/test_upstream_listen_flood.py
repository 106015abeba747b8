"""A hostile upstream flooding its listen stream with ``list_changed`` (issue 40 item 3): each
notification only marks the upstream for a sync, and the syncs it causes are at most one per gap
(``registry/upstreams/keeper.py``), not one per notification nor syncs back to back. The upstream is
an official SDK server process on loopback whose ``flood`` tool announces a change N times."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.conf import settings
from django.test import override_settings

from mcp_protocol.stores.memory.claims import MemoryClaimStore
from registry.models import Upstream
from registry.upstreams.keeper import Keeper
from tests.support.changing_upstream import ChangingUpstream
from tests.support.polling import eventually

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(120)]
MEMORY_BUS = {"BACKEND": "mcp_protocol.bus.memory.MemoryBus", "OPTIONS": {}}
GAP = 5.0


@pytest.fixture(autouse=True)
def loopback_allowed() -> Iterator[None]:
    bus = {**settings.MCP, "BUS": MEMORY_BUS}
    with override_settings(REGISTRY_HTTP_ALLOWED_HOSTS=["127.0.0.1"], MCP=bus):
        yield


@pytest.fixture
async def keeper() -> AsyncIterator[Keeper]:
    made = Keeper(MemoryClaimStore(), lease=5.0, debounce=0.05, tick=0.05, gap=GAP)
    yield made
    await made.stop()


async def test_a_flood_of_list_changed_is_at_most_one_sync_per_gap(keeper: Keeper) -> None:
    with ChangingUpstream() as up:
        row = await sync_to_async(Upstream.objects.create)(
            name="flooder", prefix="fl", url=up.url, transport="streamable-http", timeout=5,
            connect_timeout=2, sync_interval=0)
        assert await keeper.check() == {row.pk}
        hold = keeper.holds[row.pk]
        await eventually(lambda: _at_least(hold, 1), 10.0, step=0.05)  # the sync on connect
        first = hold.syncs
        loop = asyncio.get_running_loop()
        began = loop.time()
        await up.call("flood", count=300, every=0.01)  # a notification every 10 ms for 3 s or more
        await eventually(lambda: _settled(hold, first), 20.0, step=0.05)  # nothing more to sync
        elapsed = loop.time() - began
        # One sync per notification would be 300; one per debounce window and sync, several a second.
        assert 1 <= hold.syncs - first <= elapsed / GAP + 1, (hold.syncs - first, elapsed)


async def _settled(hold: Any, first: int) -> bool:
    return not hold.dirty.is_set() and hold.syncs > first


async def _at_least(hold: Any, count: int) -> bool:
    return bool(hold.syncs >= count)
