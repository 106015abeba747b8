"""What the admin and the REST API do to an upstream on an operator's request (issue 40 item 5):
test its connection, sync it now, approve or discard a pending (review-mode) sync, count what it
mirrors. The connecting and the syncing are ``registry.upstreams``' (``connect``, ``sync``); this
module only runs them for a request, as the request's author (``changes/authorship.py``), so the
change set a sync or an approval writes names who asked for it, from where.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from asgiref.sync import async_to_sync
from django.db.models import Count, Q

from .changes.authorship import Author, authored
from .models import Prompt, Resource, ResourceTemplate, Tool, Upstream

# A sync that changes nothing writes no change set: the log still says who asked for it.
logger = logging.getLogger(__name__)


class NotApproved(Exception):
    """Nothing pending, or the pending diff is stale: said to the operator (409 in the API)."""


MIRRORED_KINDS = (("tools", Tool), ("resources", Resource), ("resource_templates", ResourceTemplate),
                  ("prompts", Prompt))


def mirrored_counts(upstream: Upstream) -> dict[str, int]:
    """``{"tools": 3, …, "missing": 1}``: one aggregate query per kind."""
    counts: dict[str, int] = {"missing": 0}
    for key, model in MIRRORED_KINDS:
        found = model._default_manager.filter(upstream=upstream).aggregate(
            all=Count("pk"), missing=Count("pk", filter=Q(upstream_missing=True)))
        counts[key] = found["all"]
        counts["missing"] += found["missing"]
    return counts


def test_connection(upstream: Upstream) -> dict[str, Any]:
    """Connect and initialize only (nothing listed, nothing written): the upstream's serverInfo,
    protocol version, capabilities and the latency, or the error. Bounded by the upstream's
    connect timeout plus its call timeout."""
    from .upstreams.config import UpstreamConfig
    from .upstreams.connect import connect

    async def probe() -> dict[str, Any]:
        async with asyncio.timeout(upstream.connect_timeout + upstream.timeout):
            async with connect(UpstreamConfig.of(upstream)) as session:
                info = session.server_info
                capabilities = session.server_capabilities
                return {
                    "ok": True,
                    "server_info": info.model_dump(mode="json", exclude_none=True) if info else {},
                    "protocol_version": session.protocol_version,
                    "capabilities": (capabilities.model_dump(mode="json", exclude_none=True)
                                     if capabilities else {}),
                }

    started = time.perf_counter()
    try:
        answer = async_to_sync(probe)()
    except Exception as exc:  # any failure to reach it is the answer, never a 500
        answer = {"ok": False, "error": _reason(exc)}
    answer["latency_ms"] = round((time.perf_counter() - started) * 1000, 1)
    return answer


def _reason(exc: BaseException) -> str:
    """An exception group (anyio's task groups wrap the transport's error) told by its first leaf."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, TimeoutError):
        return "Timed out connecting or initializing."
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def sync_now(upstream: Upstream, author: Author) -> dict[str, Any]:
    """Sync ``upstream`` now, as ``author``: ``SyncReport.to_json()``. An upstream failure is the
    report's ``error``; in review mode the report is the diff stored for approval (``pending``)."""
    from .upstreams.sync import sync_upstream

    with authored(author):
        report = sync_upstream(upstream)
    outcome = report.error or ("pending review" if report.pending else "applied" if report.applied
                               else "no change")
    logger.info("upstream %s synced on request of %s (%s): %s", upstream.name, author.actor, author.source,
                outcome)
    return report.to_json()


def pending_report(upstream: Upstream) -> dict[str, Any] | None:
    """The diff a review-mode sync stored and waits for approval, or None."""
    pending = getattr(upstream, "pending_sync", None) or {}
    return pending.get("report") if pending else None


def approve(upstream: Upstream, author: Author) -> dict[str, Any]:
    """Apply the pending diff, as ``author``; ``NotApproved`` when nothing is pending or it is stale."""
    from .upstreams.review import apply_pending

    with authored(author):
        report = apply_pending(upstream)
    logger.info("pending sync of upstream %s approved by %s (%s): %s", upstream.name, author.actor,
                author.source, "applied" if report.applied else report.error)
    if not report.applied:
        raise NotApproved(f"Not applied: {report.error or 'nothing is pending'}.")
    return report.to_json()


def discard(upstream: Upstream) -> bool:
    """Drop the pending diff (not an edit of the row: no version, as the sync stores it)."""
    return bool(Upstream.objects.filter(pk=upstream.pk).exclude(pending_sync={}).update(pending_sync={}))
