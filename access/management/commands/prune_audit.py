"""Delete audit records older than ``MCP_AUDIT_RETENTION_DAYS`` (run it daily, e.g. from cron)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from access.audit import prune


class Command(BaseCommand):
    help = "Delete audit records older than MCP_AUDIT_RETENTION_DAYS (or --days)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--days", type=int, help="keep this many days instead of the setting")

    def handle(self, *args: Any, **options: Any) -> None:
        deleted = prune(options["days"])
        self.stdout.write(f"Deleted {deleted} audit record(s).")
