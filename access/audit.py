"""``DatabaseAuditSink``: the audit queue's ``AuditSink`` (``mcp_protocol/auth/audit.py``) on the
``AuditRecord`` table: one ``bulk_create`` per batch, in a worker thread. ``prune`` deletes what is
older than ``MCP_AUDIT_RETENTION_DAYS`` (the ``prune_audit`` command)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import close_old_connections
from django.utils import timezone

from mcp_protocol.auth.audit import AuditEntry, AuditSink

from .models import AuditRecord


def _row(entry: AuditEntry) -> AuditRecord:
    return AuditRecord(
        time=datetime.fromtimestamp(entry.time, UTC), principal=entry.principal[:300],
        principal_id=(entry.principal_id or "")[:300], session=entry.session or "",
        revision=entry.revision, method=entry.method, name=entry.name[:500],
        arguments=entry.arguments, outcome=entry.outcome, error=entry.error,
        duration_ms=round(entry.duration_ms, 3))


def _write(entries: list[AuditEntry]) -> None:
    close_old_connections()
    try:
        AuditRecord.objects.bulk_create([_row(e) for e in entries])
    finally:
        close_old_connections()


class DatabaseAuditSink(AuditSink):
    async def write(self, entries: list[AuditEntry]) -> None:
        await sync_to_async(_write, thread_sensitive=False)(entries)


def prune(days: int | None = None) -> int:
    days = int(settings.MCP_AUDIT_RETENTION_DAYS if days is None else days)
    deleted, _ = AuditRecord.objects.filter(time__lt=timezone.now() - timedelta(days=days)).delete()
    return deleted
