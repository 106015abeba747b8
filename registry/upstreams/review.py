"""Review mode (``Upstream.review_syncs``): a sync stores its listing and diff as
``pending_sync`` instead of applying it; ``apply_pending(upstream)`` applies it in one
transaction if the upstream's mirrored rows did not change since (their ids, versions and missing
flags: ``fingerprint``), else refuses it as stale (sync again to see the current diff)."""

from __future__ import annotations

import hashlib
from typing import Any

from django.db import models, transaction
from django.utils import timezone

from ..changes import authorship
from ..models.upstreams import Upstream
from .listing import Listing
from .plan import MODELS, author, plan, write
from .report import SyncReport


def fingerprint(upstream: Upstream) -> str:
    rows: list[Any] = [upstream.prefix]
    for kind, model in MODELS.items():
        manager = model._default_manager  # type: ignore[attr-defined]
        rows += [(kind, *r) for r in manager.filter(upstream=upstream).order_by("pk")
                 .values_list("pk", "version", "upstream_missing")]
    return hashlib.sha256(repr(rows).encode()).hexdigest()


def _set(upstream: Upstream, pending: dict[str, Any]) -> None:
    models.QuerySet(Upstream).filter(pk=upstream.pk).update(pending_sync=pending)  # not an edit: no version
    upstream.pending_sync = pending


def store(upstream: Upstream, listing: Listing, trusted: set[str], report: SyncReport) -> None:
    """Keep the sync for approval (or clear what waited, when nothing would change)."""
    if not report.changed:
        _set(upstream, {})
        return
    report.pending = True
    _set(upstream, {"listing": listing.to_json(), "trusted": sorted(trusted), "report": report.to_json(),
                    "fingerprint": fingerprint(upstream), "at": timezone.now().isoformat()})


def apply_pending(upstream: Upstream) -> SyncReport:
    """Apply the stored sync (one change set), or say why not (``error``: nothing pending, stale)."""
    with authorship.authored(author(upstream, "approved sync")), transaction.atomic():
        locked = Upstream.objects.select_for_update().get(pk=upstream.pk)
        pending = locked.pending_sync or {}
        if not pending:
            return SyncReport(upstream=upstream.name, error="nothing is pending", health=locked.health)
        if fingerprint(locked) != pending.get("fingerprint"):
            _set(upstream, {})
            return SyncReport(upstream=upstream.name, health=locked.health,
                              error="stale: the upstream's rows changed since this sync; sync again")
        listing = Listing.from_json(pending["listing"])
        planned = plan(locked, listing.definitions, set(pending.get("trusted", ())))
        write(planned)
        _set(upstream, {})
    planned.report.applied = True
    planned.report.health = locked.health
    return planned.report
