"""The staff approval queue (``mcp_protocol/approvals.py``'s ``ApprovalQueue``) on the ``Approval``
table, and the one place a decision is taken (the admin's actions and the API call ``decide``).

How a decision reaches the waiting call, whatever the worker: the row is the truth. The waiting
worker files the row, subscribes to ``approval:<id>`` on the bus and only then reads the row (so a
decision taken between the filing and the subscription is read, not missed); ``decide`` updates the
row only while it is pending and unexpired (one ``UPDATE … WHERE decision = ''``: two staff, or a
decision racing the timeout, cannot both win) and publishes on that channel after the commit. The
bus is at-most-once: a backend that reconnected delivers ``RESYNC``, and any message makes the
waiter read the row again; at its deadline it reads the row one last time by expiring it (the same
conditional ``UPDATE``), so a decision that won the race still counts.

Every decision is audited (``AuditRecord``, method ``approval/approve``, ``approval/deny``,
``approval/expire``, or ``approval/cancel`` when the call ended first) with who decided; the
arguments are not copied there (they may hold secrets and the audit log has readers the queue
does not).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from asgiref.sync import sync_to_async
from django.db import close_old_connections, transaction
from django.utils import timezone

from mcp_protocol.approvals import APPROVED, DENIED, EXPIRED, ApprovalQueue, ApprovalRequest
from mcp_protocol.bus.base import Bus

from .models import Approval, AuditRecord

logger = logging.getLogger(__name__)

DECIDED_BY_STAFF = (APPROVED, DENIED)
CANCELLED = "cancelled"  # the call ended before a decision (cancelled by its client, its worker stopping)
AUDIT_METHOD = {
    APPROVED: "approval/approve",
    DENIED: "approval/deny",
    EXPIRED: "approval/expire",
    CANCELLED: "approval/cancel",
}


class NotPending(Exception):
    """The approval was already decided, or expired: nothing was changed."""

    def __init__(self, approval: Approval) -> None:
        super().__init__(f"Approval {approval.pk} is {approval.decision or 'expired'}, not pending")
        self.approval = approval


def channel(approval_id: int) -> str:
    return f"approval:{approval_id}"


def arguments_digest(arguments: Mapping[str, Any]) -> str:
    text = json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def _in_thread(fn: Any) -> Any:
    """``fn`` in a pool thread whose connection is released after (nothing else there closes it)."""

    def run(*args: Any) -> Any:
        close_old_connections()
        try:
            return fn(*args)
        finally:
            close_old_connections()

    return sync_to_async(run, thread_sensitive=False)


def _file(request: ApprovalRequest, timeout: float) -> int:
    now = timezone.now()
    row = Approval.objects.create(
        tool=request.tool,
        arguments=dict(request.arguments),
        arguments_digest=arguments_digest(request.arguments),
        principal=request.principal[:300],
        principal_id=(request.principal_id or "")[:300],
        session=request.session,
        server=request.endpoint[:64],
        created=now,
        expires_at=now + timedelta(seconds=timeout),
    )
    return int(row.pk)


def _decision(approval_id: int) -> str:
    return str(Approval.objects.filter(pk=approval_id).values_list("decision", flat=True).first() or "")


def _close(approval_id: int, why: str = EXPIRED) -> str:
    """Close a call nobody waits for any more (``EXPIRED``, ``CANCELLED``), so no decision can
    land after it; the decision that won the race, if one did."""
    try:
        return _settle(approval_id, why, None, check_expiry=False).decision
    except NotPending as exc:
        return exc.approval.decision or why


async def _cancel(approval_id: int, reading: asyncio.Future[str] | None) -> None:
    """Close the approval of a call that ended, after its own read in flight: a cancelled await
    leaves that read running in its thread, and our write must not race it (SQLite's shared cache,
    the tests' database, refuses the pair at once instead of queueing it)."""
    if reading is not None:
        await asyncio.wait({reading})
    await _in_thread(_close)(approval_id, CANCELLED)


class DatabaseApprovalQueue(ApprovalQueue):
    def __init__(self, bus: Bus) -> None:
        self.bus = bus

    async def decide(self, request: ApprovalRequest, timeout: float) -> str:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        approval_id = await _in_thread(_file)(request, timeout)
        logger.info(
            "Call of %s by %s waits for staff approval %s", request.tool, request.principal, approval_id
        )
        subscription = await self.bus.subscribe(channel(approval_id))
        reading: asyncio.Future[str] | None = None

        async def read() -> str:
            nonlocal reading
            reading = asyncio.ensure_future(_in_thread(_decision)(approval_id))
            return await asyncio.shield(reading)

        try:
            messages = aiter(subscription)
            decision = await read()
            while not decision:
                remaining = deadline - loop.time()
                if remaining <= 0:
                    break
                try:
                    await asyncio.wait_for(anext(messages), remaining)
                except (TimeoutError, StopAsyncIteration):
                    break
                decision = await read()  # any message, RESYNC too
        except asyncio.CancelledError:
            # The call ended first (its client cancelled it, the worker is stopping): staff must
            # not approve what will never run.
            await asyncio.shield(_cancel(approval_id, reading))
            raise
        finally:
            await subscription.close()
        if not decision:
            decision = await _in_thread(_close)(approval_id)
        return decision


def _settle(approval_id: int, decision: str, user: Any, *, check_expiry: bool = True) -> Approval:
    """Record ``decision`` if the approval is still pending; audit it; tell the waiting worker."""
    now = timezone.now()
    with transaction.atomic():
        pending = Approval.objects.filter(pk=approval_id, decision="")
        if check_expiry:
            pending = pending.filter(expires_at__gt=now)
        changed = pending.update(decision=decision, decided_by=user, decided_at=now)
        row = Approval.objects.get(pk=approval_id)
        if not changed:
            raise NotPending(row)
        _audit(row, user, now)
        transaction.on_commit(lambda: _publish(approval_id, decision))
    return row


def decide(approval_id: int, approve: bool, user: Any) -> Approval:
    """A member of staff's decision (``Approval.DoesNotExist``, ``NotPending``)."""
    return _settle(approval_id, APPROVED if approve else DENIED, user)


def _audit(row: Approval, user: Any, now: Any) -> None:
    who = (
        f"staff:{user.get_username()}"
        if user is not None
        else ("timeout" if row.decision == EXPIRED else "caller")
    )
    AuditRecord.objects.create(
        time=now,
        principal=who,
        principal_id=str(user.pk) if user is not None else "",
        session=row.session,
        revision="",
        method=AUDIT_METHOD[row.decision],
        name=row.tool,
        arguments={"approval": row.pk, "caller": row.principal, "arguments_digest": row.arguments_digest},
        outcome=row.decision,
        error="",
        duration_ms=(now - row.created).total_seconds() * 1000.0,
        server=row.server,
    )


def _publish(approval_id: int, decision: str) -> None:
    """Never raises: the decision is committed; a waiter that missed the message reads the row at
    its deadline (and the approval then counts, since expiring only changes a pending row)."""
    from mcp_django.conf import mcp_settings

    try:
        mcp_settings.backend("BUS").publish_sync(channel(approval_id), {"decision": decision})
    except Exception:
        logger.exception("Could not publish the decision on approval %s", approval_id)
