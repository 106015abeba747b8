"""``manage.py export_registry [--output FILE] [--at CHANGESET|TIME]``: the whole registry as one
JSON document, the format of ``import_registry`` and of ``GET /api/v1/registry/export``
(``registry/transfer/documents.py``), so a registry can live in git. ``--at`` exports it as it was: after a
change set (its id), or at a time (ISO 8601, e.g. ``2026-11-26T18:00:00Z``: the last change set
opened by then), from the history; promote it to another environment with
``import_registry --dry-run`` (the diff it would apply), then ``import_registry``."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from ...history.versions import changeset_at
from ...models import ChangeSet
from ...transfer.documents import export_document


class Command(BaseCommand):
    help = "Write the whole registry as one JSON document (stdout by default)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--output", "-o", default="-", help="A file, or - for stdout.")
        parser.add_argument(
            "--at",
            help="A change set id, or an ISO 8601 time: the registry as it was then (from its history).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        at = None if options["at"] is None else self._changeset(options["at"])
        text = json.dumps(export_document(at=at), indent=2, ensure_ascii=False) + "\n"
        if options["output"] == "-":
            self.stdout.write(text, ending="")
        else:
            with open(options["output"], "w", encoding="utf-8") as out:
                out.write(text)

    def _changeset(self, value: str) -> int:
        if value.isdigit():
            if not ChangeSet.objects.filter(pk=int(value)).exists():
                raise CommandError(f"No change set {value}.")
            return int(value)
        when = parse_datetime(value)
        if when is None:
            raise CommandError(f"--at {value!r} is neither a change set id nor an ISO 8601 time.")
        if timezone.is_naive(when):
            when = timezone.make_aware(when, timezone.get_current_timezone())
        found = changeset_at(when)
        if found is None:
            raise CommandError(f"No change set was opened by {when.isoformat()}.")
        return found
