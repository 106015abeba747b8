"""Running upstream syncs (issue 40): the periodic sync (one worker per upstream and interval), the
``sync_upstreams`` command, and the health gauges on /metrics. Against a server of the official
Python SDK on loopback and the real database."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import timedelta
from io import StringIO

import pytest
from asgiref.sync import sync_to_async
from django.core.management import CommandError, call_command
from django.db import models
from django.test import override_settings
from django.utils import timezone

from mcp_protocol.stores.memory.claims import MemoryClaimStore
from registry.models import Tool, Upstream
from registry.upstreams import metrics, periodic
from tests.support.sdk_upstream import SdkUpstream

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def loopback_allowed() -> Iterator[None]:
    with override_settings(REGISTRY_HTTP_ALLOWED_HOSTS=["127.0.0.1"]):
        yield


@pytest.fixture
def up() -> Iterator[SdkUpstream]:
    with SdkUpstream() as server:
        yield server


def make(url: str, name: str = "sdk", prefix: str = "up", **fields: object) -> Upstream:
    return Upstream.objects.create(name=name, prefix=prefix, url=url, timeout=5, connect_timeout=2, **fields)


async def test_two_workers_sync_a_due_upstream_once(up: SdkUpstream) -> None:
    row = await sync_to_async(make)(up.url, sync_interval=60)
    await sync_to_async(make)(up.url, name="never", prefix="nv", sync_interval=0)  # 0: no periodic sync
    claims = MemoryClaimStore()  # the store every worker shares (Redis in production)
    first, second = periodic.PeriodicSync(claims, 60), periodic.PeriodicSync(claims, 60)
    synced = await asyncio.gather(first.check(), second.check())
    assert sorted(synced, key=len) == [[], ["sdk"]]
    assert await sync_to_async(Tool.objects.filter(upstream=row).count)() == 2
    # Synced now: not due again until its interval has passed.
    assert await first.check() == [] and await second.check() == []


def test_an_upstream_is_due_after_its_interval_and_not_when_disabled(up: SdkUpstream) -> None:
    row = make(up.url, sync_interval=300)
    assert periodic.due() == [row]
    models.QuerySet(Upstream).filter(pk=row.pk).update(last_sync_at=timezone.now() - timedelta(seconds=100))
    assert periodic.due() == []
    models.QuerySet(Upstream).filter(pk=row.pk).update(last_sync_at=timezone.now() - timedelta(seconds=301))
    assert periodic.due() == [row]
    models.QuerySet(Upstream).filter(pk=row.pk).update(enabled=False)
    assert periodic.due() == []


def test_the_command_syncs_dry_runs_and_fails_on_an_upstream_it_cannot_list(up: SdkUpstream) -> None:
    row = make(up.url)
    out = StringIO()
    call_command("sync_upstreams", "--dry-run", stdout=out)
    assert "sdk: 5 added" in out.getvalue() and not Tool.objects.filter(upstream=row).exists()
    call_command("sync_upstreams", "--name", "sdk", stdout=out)
    assert Tool.objects.filter(upstream=row).count() == 2
    make("http://127.0.0.1:1/mcp", name="gone", prefix="gone")
    with pytest.raises(CommandError, match="could not be synced"):
        call_command("sync_upstreams", stdout=(out := StringIO()))
    assert "gone: error:" in out.getvalue()
    with pytest.raises(CommandError, match="No upstream named"):
        call_command("sync_upstreams", "--name", "nope")


def test_health_gauges_per_upstream_with_bounded_labels(up: SdkUpstream,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    make(up.url)
    call_command("sync_upstreams", stdout=StringIO())
    make("http://127.0.0.1:1/mcp", name="gone", prefix="gone")
    with pytest.raises(CommandError):
        call_command("sync_upstreams", "--name", "gone", stdout=StringIO())
    text = metrics.exposition().decode()
    assert 'mcp_upstream_health{state="up",upstream="sdk"} 1.0' in text
    assert 'mcp_upstream_health{state="down",upstream="gone"} 1.0' in text
    assert 'mcp_upstream_latency_ms{upstream="sdk"}' in text
    assert 'mcp_upstream_last_sync_age_seconds{upstream="gone"}' in text
    assert 'mcp_upstream_last_ok_age_seconds{upstream="gone"}' not in text  # never listed

    monkeypatch.setattr(metrics, "MAX_UPSTREAM_LABELS", 1)  # "gone" sorts first and keeps its label
    text = metrics.exposition().decode()
    assert 'upstream="sdk"' not in text
    assert 'mcp_upstream_health{state="up",upstream="_other"} 1.0' in text
