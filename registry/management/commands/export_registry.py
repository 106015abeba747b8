"""``manage.py export_registry [--output FILE]``: the whole registry as one JSON document, the
format of ``import_registry`` and of ``GET /api/v1/registry/export`` (``registry/transfer.py``),
so a registry can live in git."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from registry.transfer import export_document


class Command(BaseCommand):
    help = "Write the whole registry as one JSON document (stdout by default)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--output", "-o", default="-", help="A file, or - for stdout.")

    def handle(self, *args: Any, **options: Any) -> None:
        text = json.dumps(export_document(), indent=2, ensure_ascii=False) + "\n"
        if options["output"] == "-":
            self.stdout.write(text, ending="")
        else:
            with open(options["output"], "w", encoding="utf-8") as out:
                out.write(text)
