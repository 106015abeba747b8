"""``manage.py seed_tools --count N``: N simple template tools ``seed_0001``… (for benchmarks)."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from ...changes.authorship import Author, authored
from ...models import Tool
from ...models.history import bulk_create_recorded


class Command(BaseCommand):
    help = "Create (or keep) N simple template tools named seed_0001…seed_N; idempotent."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--count", type=int, default=100, help="How many tools (default 100).")
        parser.add_argument("--prefix", default="seed_", help="Their name before the number (default seed_).")

    def handle(self, *args: Any, **options: Any) -> None:
        count, prefix = options["count"], options["prefix"]
        if count < 0:
            raise CommandError(f"--count must be 0 or more, not {count}")
        names = [f"{prefix}{i:04d}" for i in range(1, count + 1)]
        existing = set(Tool.objects.filter(name__in=names).values_list("name", flat=True))
        new = [
            Tool(
                name=name,
                description=f"Seeded tool {name}: echoes its 'value' argument.",
                kind=Tool.Kind.TEMPLATE,
                input_schema={"type": "object", "properties": {"value": {"type": "string"}}},
                template_text=f"{name}: {{{{ value }}}}",
            )
            for name in names
            if name not in existing
        ]
        for tool in new:
            try:
                tool.full_clean()
            except ValidationError as exc:  # a --prefix that makes no valid tool name
                raise CommandError(f"{tool.name!r}: {exc.messages[0]}") from None
        # One change set from this command, a version of every tool, one change message.
        with authored(Author(source="command")), transaction.atomic():
            bulk_create_recorded(Tool, new)
        self.stdout.write(self.style.SUCCESS(f"{len(new)} tools created, {len(existing)} already there."))
