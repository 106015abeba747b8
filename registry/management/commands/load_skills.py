"""``manage.py load_skills FOLDER``: create or update the skills kept in a folder (idempotent)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from ...skills.loading import load_skill_folder

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "skills"


class Command(BaseCommand):
    help = "Load every skill (a folder with a SKILL.md) under FOLDER; loading again changes nothing."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "folder", nargs="?", default=str(FIXTURE),
            help="Default: the fixture skill set (nested folders, a binary file) of the conformance tests.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        root = Path(options["folder"])
        if not root.is_dir():
            raise CommandError(f"{root} is not a folder")
        skipped: list[str] = []
        try:
            loaded = load_skill_folder(root, skipped)
        except (ValidationError, ValueError) as exc:
            raise CommandError(f"Invalid skill: {exc}") from exc
        for path in skipped:  # links out of the folder are never read (skills/loading.py)
            self.stderr.write(self.style.WARNING(f"Skipped {path}: a link to outside {root}."))
        self.stdout.write(self.style.SUCCESS(f"Loaded {len(loaded)} skills: {', '.join(loaded)}."))
