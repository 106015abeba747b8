"""``manage.py import_openapi FILE --source NAME [rules] [--dry-run] [--prune]``: an OpenAPI 3.0/3.1
document (JSON or YAML; ``-`` for stdin) as http tools (``registry/transfer/openapi/``), as
``POST /api/v1/registry/openapi`` and the admin upload do. Prints one line per operation
(create, update, unchanged, conflict, skip, invalid, stale) and a summary; ``--dry-run`` writes
nothing. Re-importing the same ``--source`` updates its own tools and leaves every other alone.

    curl -s -H "Authorization: Bearer $TOKEN" http://127.0.0.1:8000/api/v1/schema/?format=json \\
      | manage.py import_openapi - --source mcpsite --prefix mcpsite. \\
          --base-url http://127.0.0.1:8000 --secret-header Authorization --secret-env MCP_TOOL_SECRET_MCPSITE
"""

from __future__ import annotations

import json
import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ...transfer.openapi.document import InvalidDocument, load
from ...transfer.openapi.importer import Options, Rules, run


class Command(BaseCommand):
    help = "Import the operations of an OpenAPI 3.0/3.1 document (FILE, or - for stdin) as http tools."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="The OpenAPI document, JSON or YAML; - for stdin.")
        parser.add_argument("--source", required=True, help="Name of this import (re-imports update it).")
        parser.add_argument("--base-url", default="", help="The API's URL (default: the document's server).")
        parser.add_argument("--prefix", default="", help="Put before every tool name, e.g. 'petstore.'.")
        parser.add_argument("--include-tag", action="append", default=[], help="Only operations with a tag.")
        parser.add_argument("--exclude-tag", action="append", default=[], help="Skip operations with a tag.")
        parser.add_argument("--include-path", action="append", default=[], help="A path pattern: /pet/*")
        parser.add_argument("--exclude-path", action="append", default=[], help="Skip a path pattern.")
        parser.add_argument("--method", action="append", default=[], help="Only these methods (GET, ...).")
        parser.add_argument("--timeout", type=float, default=10.0, help="Seconds per upstream call (10).")
        parser.add_argument("--secret-header", default="", help="Header carrying the API's credential.")
        parser.add_argument("--secret-env", default="", help="Environment variable holding it.")
        parser.add_argument("--tag", action="append", default=[],
                            help="Access tag for every tool (keys and scopes that grant it may call them).")
        parser.add_argument("--disabled", action="store_true", help="Create new tools disabled, for review.")
        parser.add_argument("--dry-run", action="store_true", help="Print what would change; write nothing.")
        parser.add_argument("--prune", action="store_true",
                            help="Delete this source's tools whose operation is gone.")
        parser.add_argument("--json", action="store_true", help="Print the report as JSON.")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            if options["file"] == "-":
                text = sys.stdin.read()
            else:
                with open(options["file"], encoding="utf-8") as source:
                    text = source.read()
            document = load(text)
        except (OSError, InvalidDocument) as exc:
            raise CommandError(f"Cannot read {options['file']}: {exc}") from None
        rules = Rules(*(tuple(options[k]) for k in ("include_tag", "exclude_tag", "include_path",
                                                      "exclude_path", "method")))
        settings = Options(source=options["source"], base_url=options["base_url"],
                           prefix=options["prefix"], timeout=options["timeout"],
                           secret_header=options["secret_header"], secret_env=options["secret_env"],
                           enabled=not options["disabled"], tags=tuple(options["tag"]))
        try:
            report = run(document, settings, rules, dry_run=options["dry_run"], prune=options["prune"])
        except InvalidDocument as exc:
            raise CommandError(str(exc)) from None
        if options["json"]:
            self.stdout.write(json.dumps(report.as_dict(), indent=2))
            return
        for change in report.changes:
            self.stdout.write(f"{change.action:<9} {change.name}  {change.detail}")
        if report.credentials:
            self.stdout.write(f"credentials the API asks for: {report.credentials}")
        counts = ", ".join(f"{n} {a}" for a, n in report.summary().items() if n)
        done = "dry run, nothing written" if options["dry_run"] else "imported"
        self.stdout.write(f"{done}: {counts or 'nothing'}")
