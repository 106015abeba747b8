"""``manage.py prune_history [--days N] [--dry-run]``: delete the registry's versions and change
sets older than ``REGISTRY_HISTORY_RETENTION_DAYS``, never the latest version of a live row
(``registry/history/retention.py``). Run it daily, e.g. from cron."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ...history.retention import prune


class Command(BaseCommand):
    help = "Delete registry history older than REGISTRY_HISTORY_RETENTION_DAYS (or --days)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--days", type=int, help="keep this many days (at least 1), not the setting's")
        parser.add_argument("--dry-run", action="store_true", help="count what would go; delete nothing")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            counts = prune(options["days"], dry_run=options["dry_run"])
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        verb = "Would delete" if options["dry_run"] else "Deleted"
        self.stdout.write(f"{verb} " + ", ".join(f"{n} {table}" for table, n in counts.items()) + ".")
