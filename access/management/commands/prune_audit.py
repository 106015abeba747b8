"""Delete audit records, and closed staff approvals, older than ``MCP_AUDIT_RETENTION_DAYS`` (run it
daily, e.g. from cron)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from access.audit import prune, prune_approvals


class Command(BaseCommand):
    help = "Delete audit records and closed approvals older than MCP_AUDIT_RETENTION_DAYS (or --days)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--days", type=int, help="keep this many days (at least 1), not the setting's")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            deleted = prune(options["days"])
            approvals = prune_approvals(options["days"])
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"Deleted {deleted} audit record(s) and {approvals} closed approval(s).")
