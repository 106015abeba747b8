"""The periodic sync: every upstream synced every ``sync_interval`` seconds by ONE worker.

Each worker looks every ``REGISTRY_UPSTREAM_SYNC_TICK`` seconds (default 30; 0: no periodic sync
in this process) for enabled upstreams whose last sync is ``sync_interval`` old, and takes the
one-time job ``upstream-sync:<id>:<interval>:<slot>`` (``slot``: the current interval's number
since the epoch) on the shared claim store (``mcp_protocol/stores/claims.py``: of concurrent
takers on any workers exactly one wins). The winner syncs and marks the job done for two
intervals; a winner that dies lets its lease lapse and another worker retakes the job. Started
and stopped with the provider (``registry/provider.py``), like the reconciler.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from datetime import timedelta

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from mcp_protocol.stores.claims import Claim, ClaimStore

from ..models.upstreams import Upstream
from .sync import summary, sync_upstream_async

logger = logging.getLogger(__name__)
TICK = 30.0


def tick() -> float:
    return float(getattr(settings, "REGISTRY_UPSTREAM_SYNC_TICK", TICK))


def due(now: float | None = None) -> list[Upstream]:
    """Enabled upstreams with a sync interval whose last sync is at least that old (or never)."""
    moment = timezone.now() if now is None else timezone.datetime.fromtimestamp(now, tz=timezone.UTC)
    out = []
    for row in Upstream.objects.filter(Q(enabled=True) & Q(sync_interval__gt=0)):
        if row.last_sync_at is None or moment - row.last_sync_at >= timedelta(seconds=row.sync_interval):
            out.append(row)
    return out


def job_key(row: Upstream, now: float) -> str:
    return f"upstream-sync:{row.pk}:{row.sync_interval}:{int(now // row.sync_interval)}"


class PeriodicSync:
    def __init__(self, claims: ClaimStore | Callable[[], ClaimStore], every: float) -> None:
        # A callable: the store is looked up at the first check, not when the provider starts.
        self._claims, self.every = claims, every
        self.loop = asyncio.get_running_loop()
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self._task = asyncio.create_task(self._run())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _run(self) -> None:
        while True:
            # A tick first: a worker starting serves at once; its upstreams keep their last sync.
            await asyncio.sleep(self.every)
            try:
                await self.check()
            except Exception:  # the database or the claim store down: try again next tick
                logger.exception("periodic upstream sync failed")

    async def check(self) -> list[str]:
        """Sync the due upstreams this worker wins the claim of; their names."""
        synced: list[str] = []
        claims = self._claims() if callable(self._claims) else self._claims
        for row in await sync_to_async(due, thread_sensitive=False)():
            now = time.time()
            key = job_key(row, now)
            lease = row.connect_timeout + row.timeout * 4 + 30  # the handshake and four listings
            if await claims.claim_once(key, lease) not in (Claim.WON, Claim.RETAKEN):
                continue
            try:
                report = await sync_upstream_async(row)
                logger.info("periodic sync of upstream %s: %s", row.name, summary(report))
                synced.append(row.name)
            finally:
                await claims.finish_once(key, ttl=row.sync_interval * 2)
        return synced
