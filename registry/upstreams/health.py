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
"""

from __future__ import annotations

from django.db import models
from django.utils import timezone

from ..models.upstreams import Upstream
from .listing import Listing
from .report import SyncReport


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
