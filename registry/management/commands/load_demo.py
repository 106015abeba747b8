"""``manage.py load_demo [--if-empty]``: create or update the demo registry (idempotent)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from ...models import Prompt, Resource, ResourceTemplate, Tool
from ...transfer.fixtures import load_document, read_fixture


class Command(BaseCommand):
    help = "Load the demo registry (every feature); loading again changes nothing."
    fixture = "demo"

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--if-empty",
            action="store_true",
            help="Do nothing when the registry already has any definition (first run only).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options.get("if_empty") and any(
            m.objects.exists() for m in (Tool, Resource, ResourceTemplate, Prompt)
        ):
            self.stdout.write("The registry is not empty: nothing loaded.")
            return
        counts = load_document(read_fixture(self.fixture))
        summary = ", ".join(f"{n} {section}" for section, n in counts.items())
        self.stdout.write(self.style.SUCCESS(f"Loaded the {self.fixture} registry (changed: {summary})."))
