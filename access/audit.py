"""``DatabaseAuditSink``: the audit queue's ``AuditSink`` (``mcp_protocol/auth/audit.py``) on the
``AuditRecord`` table: one ``bulk_create`` per batch, in a worker thread. ``prune`` deletes what is
older than ``MCP_AUDIT_RETENTION_DAYS`` (the ``prune_audit`` command)."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from mcp_protocol.auth.audit import AuditEntry, AuditSink

from .models import AuditRecord

COLUMNS = ("time", "principal", "principal_id", "session", "revision", "method", "name", "arguments",
           "outcome", "error", "duration_ms")


def _write(entries: list[AuditEntry]) -> None:
    """One ``executemany`` in one transaction: the ORM's ``bulk_create`` costs about four times the
    CPU per row (measured: 66 against 16 µs), and this runs in the process that serves the calls.
    Values are adapted by the backend's own field preparation (JSON, datetimes), so it works on
    SQLite and PostgreSQL alike."""
    # The connection is kept between batches (a reconnect per flush costs more than the rows):
    # dropped only when it broke, the next batch then opens a new one.
    if connection.connection is not None and not connection.is_usable():
        connection.close()
    try:
        meta = AuditRecord._meta
        arguments = meta.get_field("arguments")
        table = connection.ops.quote_name(meta.db_table)
        names = ", ".join(connection.ops.quote_name(meta.get_field(c).column) for c in COLUMNS)
        sql = f"INSERT INTO {table} ({names}) VALUES ({', '.join(['%s'] * len(COLUMNS))})"
        when = connection.ops.adapt_datetimefield_value
        rows = [
            (when(datetime.fromtimestamp(e.time, UTC)), e.principal[:300], (e.principal_id or "")[:300],
             e.session or "", e.revision, e.method, e.name[:500],
             arguments.get_db_prep_save(e.arguments, connection), e.outcome, e.error,
             round(e.duration_ms, 3))
            for e in entries
        ]
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.executemany(sql, rows)
    except Exception:
        connection.close()
        raise


class DatabaseAuditSink(AuditSink):
    def __init__(self, **options: object) -> None:
        # One thread of its own, so its database connection lives across batches.
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mcp-audit")

    async def write(self, entries: list[AuditEntry]) -> None:
        await asyncio.get_running_loop().run_in_executor(self._thread, _write, entries)


def prune(days: int | None = None) -> int:
    days = int(settings.MCP_AUDIT_RETENTION_DAYS if days is None else days)
    deleted, _ = AuditRecord.objects.filter(time__lt=timezone.now() - timedelta(days=days)).delete()
    return deleted
