"""``manage.py import_registry FILE [--mode merge|replace] [--dry-run]``: apply a registry
document (``export_registry``'s format, ``registry/transfer/documents.py``) atomically, as
``POST /api/v1/registry/import`` does. Prints what changed as JSON (with ``--dry-run``, also the
field-by-field diff it would apply, per section and item: a promotion to review); on any problem prints each
with its JSON pointer in the document, writes nothing and exits with status 1."""

from __future__ import annotations

import json
import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ...transfer.documents import MODES, import_document


class Command(BaseCommand):
    help = "Import a registry document (FILE, or - for stdin) in one transaction."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="The registry document (export_registry's JSON); - for stdin.")
        parser.add_argument("--mode", choices=MODES, default="merge",
                            help="merge (default), or replace: also delete what the document does not name.")
        parser.add_argument("--dry-run", action="store_true",
                            help="Report what would change, with the diff of each item; write nothing.")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            if options["file"] == "-":
                document = json.load(sys.stdin)
            else:
                with open(options["file"], encoding="utf-8") as source:
                    document = json.load(source)
        except (OSError, ValueError) as exc:
            raise CommandError(f"Cannot read {options['file']}: {exc}") from None
        outcome = import_document(document, mode=options["mode"], dry_run=options["dry_run"])
        if outcome.errors:
            for problem in outcome.errors:
                self.stderr.write(f"{problem.path or '/'}: {problem.message}")
            raise CommandError(f"{len(outcome.errors)} problem(s): nothing was imported.")
        self.stdout.write(json.dumps(outcome.as_json(), indent=2))
