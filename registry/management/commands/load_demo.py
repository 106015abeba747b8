"""``manage.py load_demo [--if-empty]``: create or update the demo registry (idempotent): the
definitions of ``fixtures/demo.json`` (its MCP App: the ``greeting_card`` tool and its ``ui://``
view), its two virtual servers (``/mcp/docs``: what is tagged ``docs``; ``/mcp/ops``: tools chosen by
name; issue 39) and the bundled skills of ``fixtures/skills``, so a first run (``scripts/serve.sh``)
shows a newcomer skills without a separate ``load_skills`` (issue 37)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from ...models import Prompt, Resource, ResourceTemplate, Skill, Tool
from ...skills.loading import document_items
from ...transfer.fixtures import FIXTURES, load_document, read_fixture


class Command(BaseCommand):
    help = "Load the demo registry (every feature); loading again changes nothing."
    fixture = "demo"
    skills: Path | None = FIXTURES / "skills"  # a folder of skills loaded with the fixture

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--if-empty",
            action="store_true",
            help="Do nothing when the registry already has any definition (first run only).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options.get("if_empty") and any(
            m.objects.exists() for m in (Tool, Resource, ResourceTemplate, Prompt, Skill)
        ):
            self.stdout.write("The registry is not empty: nothing loaded.")
            return
        document = read_fixture(self.fixture)
        # Imported with the definitions (one change set; an unchanged skill is not written again).
        if self.skills is not None:
            document.setdefault("skills", document_items(self.skills))
        counts = load_document(document)
        summary = ", ".join(f"{n} {section}" for section, n in counts.items())
        self.stdout.write(self.style.SUCCESS(f"Loaded the {self.fixture} registry (changed: {summary})."))
