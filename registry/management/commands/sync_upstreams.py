"""``manage.py sync_upstreams [--name X] [--dry-run] [--allow-empty] [--apply-pending]``: sync the
enabled upstreams (or the one named, enabled or not) now, printing each report; exit status 1 when
one could not be listed. ``--dry-run`` lists and shows the diff, writing nothing (not even health).
Under review mode a sync stores its diff; ``--apply-pending`` applies what waits instead."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from registry.changes import authorship
from registry.models import Upstream
from registry.upstreams.review import apply_pending
from registry.upstreams.sync import summary, sync_upstream


class Command(BaseCommand):
    help = "Sync upstream MCP servers into the registry now."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--name", help="Only this upstream (enabled or not).")
        parser.add_argument("--dry-run", action="store_true", help="Show what would change; write nothing.")
        parser.add_argument("--allow-empty", action="store_true",
                            help="Trust a listing that empties a kind that had definitions.")
        parser.add_argument("--apply-pending", action="store_true",
                            help="Apply the syncs stored for review instead of syncing.")
        parser.add_argument("--json", action="store_true", help="Print each report as JSON.")

    def handle(self, *args: Any, **options: Any) -> None:
        rows = Upstream.objects.all() if options["name"] else Upstream.objects.filter(enabled=True)
        if options["name"]:
            rows = rows.filter(name=options["name"])
            if not rows.exists():
                raise CommandError(f"No upstream named {options['name']!r}.")
        failed = False
        author = dataclasses.replace(authorship.current(), source="command")
        with authorship.authored(author):
            for row in rows:
                if options["apply_pending"]:
                    report = apply_pending(row)
                else:
                    report = sync_upstream(row, apply=not options["dry_run"],
                                           allow_empty=options["allow_empty"])
                failed = failed or bool(report.error)
                if options["json"]:
                    self.stdout.write(json.dumps(report.to_json()))
                else:
                    self.stdout.write(f"{row.name}: {summary(report)}")
                    for refused in report.refused:
                        self.stdout.write(f"  refused {refused.name}: {refused.reason}")
                    for line in report.detail:
                        self.stdout.write(f"  {line}")
        if failed:
            raise CommandError("At least one upstream could not be synced (see above).", returncode=1)
