"""An upstream's health, written by the sync on its row: ``health``, ``health_detail``,
``last_sync_at``, ``last_sync_ok_at``, ``latency_ms``, ``server_info``.

Written with a plain queryset ``update`` of those fields only: not an operator's edit, so no
version bump (an operator's open edit form is not made stale by a periodic sync), no history row,
no change set and no bus message (health changes no list; /metrics reads it from the row).

- ``down``: the upstream could not be listed at all (refused by our rules, unreachable, not MCP,
  unauthenticated);
- ``degraded``: listed, but partially (a page failed, a cap was reached) or a kind came back
  empty where the last good listing had definitions (not trusted: nothing pruned);
- ``up``: listed completely. Refused definitions are said in ``health_detail`` but leave it up:
  they are this registry's rules, not the upstream's health.

Between syncs the calls' circuit breaker (``breaker.py``) writes it too: open is ``down`` with the
reason, closed again is ``up`` where the breaker had put it down (``from_breaker``).
"""

from __future__ import annotations

import asyncio
import logging

from asgiref.sync import sync_to_async
from django.db import models
from django.utils import timezone

from ..models.upstreams import Upstream
from .listing import Listing
from .report import SyncReport

logger = logging.getLogger(__name__)


def verdict(listing: Listing, untrusted: list[str]) -> str:
    if listing.error:
        return str(Upstream.Health.DOWN)
    if listing.problems or untrusted:
        return str(Upstream.Health.DEGRADED)
    return str(Upstream.Health.UP)


def detail(report: SyncReport) -> str:
    lines = [report.error] if report.error else []
    lines += report.detail
    if report.refused:
        lines.append(f"{len(report.refused)} definition(s) refused: "
                     + "; ".join(f"{r.name}: {r.reason}" for r in report.refused[:10]))
    return "\n".join(lines)[:4000]


def write(upstream: Upstream, report: SyncReport, listing: Listing) -> None:
    now = timezone.now()
    fields = {"health": report.health, "health_detail": detail(report), "last_sync_at": now}
    if report.health != str(Upstream.Health.DOWN):
        fields.update(last_sync_ok_at=now, server_info=listing.server_info)
    if listing.latency_ms is not None:
        fields["latency_ms"] = listing.latency_ms
    # models.QuerySet, not the model's ChangeQuerySet: no version bump, no change published.
    models.QuerySet(Upstream).filter(pk=upstream.pk).update(**fields)
    for name, value in fields.items():
        setattr(upstream, name, value)


# -- the circuit breaker's verdict between syncs (breaker.listeners) -----------------------------
BREAKER = "circuit open: "  # how the breaker's own health detail starts


def from_breaker(name: str, state: str, reason: str) -> None:
    """A breaker opening is the upstream going down between syncs: ``down`` with the reason. Its
    closing (a call went through) is ``up`` again, where the breaker had put it down: a sync's
    ``degraded`` (a partial listing) is the listing's verdict, which a call does not change. The
    half-open probe changes nothing yet. A plain queryset update, as ``write``."""
    from .breaker import CLOSED, OPEN

    rows = models.QuerySet(Upstream).filter(name=name)
    if state == OPEN:
        rows.update(health=str(Upstream.Health.DOWN), health_detail=(BREAKER + reason)[:4000])
    elif state == CLOSED:
        rows.filter(health_detail__startswith=BREAKER).update(health=str(Upstream.Health.UP),
                                                              health_detail="")


_writes: set[asyncio.Future[None]] = set()


def breaker_listener(name: str, state: str, reason: str) -> None:
    """``breaker.listeners``' health writer: on a serving loop the write goes to a thread (a
    listener must not block the loop); it is kept referenced until done."""
    from .breaker import HALF_OPEN

    if state == HALF_OPEN:
        return
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        from_breaker(name, state, reason)
        return
    write = loop.create_task(sync_to_async(from_breaker, thread_sensitive=False)(name, state, reason))
    _writes.add(write)
    write.add_done_callback(_written)


def _written(write: asyncio.Future[None]) -> None:
    _writes.discard(write)
    if not write.cancelled() and write.exception() is not None:
        logger.warning("upstream health from the breaker not written", exc_info=write.exception())


def watch_breakers() -> None:
    """Subscribe the health writer to every breaker (once per process)."""
    from . import breaker

    if breaker_listener not in breaker.listeners:
        breaker.listeners.append(breaker_listener)
