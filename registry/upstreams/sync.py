"""``sync_upstream(upstream)``: list the upstream and mirror its definitions into the registry in
one transaction (one change set), or, with ``review_syncs``, store the diff for approval.

The never-prune rule: a listing that failed, was refused, was unauthenticated or is partial marks
nothing missing, and neither does one where a kind comes back empty while rows of that kind from
this upstream are served (the last good listing had them): an upstream restarting with an empty
registry, or a proxy answering an empty list, would otherwise hide every definition at once.
``allow_empty=True`` (``sync_upstreams --allow-empty``) accepts such a listing when the upstream
really dropped everything. A kind the upstream no longer declares a capability for counts as empty.
"""

from __future__ import annotations

import logging
from typing import Any

from asgiref.sync import async_to_sync, sync_to_async
from django.db import transaction

from ..changes import authorship
from ..changes.publish import UPSTREAMS, note_change
from ..models.upstreams import Upstream
from . import health, review
from .config import UpstreamConfig
from .listing import KINDS, Listing, fetch_listing
from .plan import MODELS, author, plan, write
from .report import SyncReport

logger = logging.getLogger(__name__)


def trusted_kinds(upstream: Upstream, listing: Listing,
                  allow_empty: bool = False) -> tuple[set[str], list[str]]:
    """The kinds whose unlisted rows may be marked missing, and why the others may not."""
    if not listing.complete:
        return set(), ["partial listing: nothing marked missing", *listing.problems]
    # A complete listing: a kind is pruned unless it came back empty where rows are served.
    trusted, untrusted = set(), []
    for kind in KINDS:
        served = MODELS[kind]._default_manager.filter(upstream=upstream, upstream_missing=False).exists()  # type: ignore[attr-defined]
        if listing.definitions[kind] or not served or allow_empty:
            trusted.add(kind)
        else:
            untrusted.append(f"{kind}: the upstream listed none where it had some; nothing marked missing "
                             "(sync with --allow-empty if it really dropped them all)")
    return trusted, untrusted


def record(upstream: Upstream, listing: Listing, *, apply: bool = True,
           allow_empty: bool = False) -> SyncReport:
    """Turn a listing into rows (or a pending review) and health; ``apply=False``: a dry run,
    writing nothing at all."""
    if listing.error:
        report = SyncReport(upstream=upstream.name, error=listing.error, health=str(Upstream.Health.DOWN))
        if apply:
            health.write(upstream, report, listing)
        return report
    with authorship.authored(author(upstream, "sync")), transaction.atomic():
        # One sync of an upstream at a time (the command beside the periodic one): the row lock.
        list(Upstream.objects.select_for_update().filter(pk=upstream.pk).values_list("pk", flat=True))
        trusted, untrusted = trusted_kinds(upstream, listing, allow_empty)
        planned = plan(upstream, listing.definitions, trusted)
        report = planned.report
        report.detail = untrusted  # a partial listing's problems included (trusted_kinds)
        report.health = health.verdict(listing, untrusted)
        if apply and upstream.review_syncs:
            review.store(upstream, listing, trusted, report)
        elif apply:
            write(planned)
            report.applied = True
        if apply:
            # In the rows' transaction: the snapshot their change set makes reads the capabilities
            # the upstream declared in this handshake (what our endpoints advertise follows them,
            # mcp_protocol/features.py; a mirrored tool's task support too). Changed capabilities
            # alone are a change as well: every worker rebuilds (no endpoint is notified).
            before = (upstream.server_info or {}).get("capabilities")
            health.write(upstream, report, listing)
            if before != listing.server_info.get("capabilities") and not (report.applied and report.changed):
                note_change(UPSTREAMS)  # (rows written: their change set already rebuilds)
    logger.info("upstream %s synced: %s", upstream.name, summary(report))
    return report


def summary(report: SyncReport) -> str:
    if report.error:
        return f"error: {report.error}"
    return (f"{len(report.added)} added, {len(report.updated)} updated, {len(report.missing)} missing, "
            f"{len(report.restored)} restored, {len(report.refused)} refused, health {report.health}")


def sync_upstream(upstream: Upstream, *, apply: bool = True, allow_empty: bool = False) -> SyncReport:
    """List ``upstream`` and mirror it (synchronous: the command, the admin, the API)."""
    listing = async_to_sync(fetch_listing)(UpstreamConfig.of(upstream))
    return record(upstream, listing, apply=apply, allow_empty=allow_empty)


async def sync_upstream_async(upstream: Upstream, **kwargs: Any) -> SyncReport:
    """The same from an event loop (the periodic sync): the listing on the loop, the rows in a thread."""
    listing = await fetch_listing(UpstreamConfig.of(upstream))
    return await sync_to_async(record, thread_sensitive=False)(upstream, listing, **kwargs)
