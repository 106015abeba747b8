"""Skills from a folder on disk (a team keeps its skills in git and syncs them) and from uploads.

``load_skill_folder(root)`` makes every folder under ``root`` holding a ``SKILL.md`` a skill whose
path is that folder's path relative to ``root`` (``acme/billing/refunds``). A skill's own files are
those under its folder outside any nested skill's folder: the nested skill holds those, and the
snapshot adds them to the enclosing skill again (SEP-2640 "Nested skills"). Idempotent: a skill is
created or updated by path and its files replaced, all in one transaction (one change published).
"""

from __future__ import annotations

import mimetypes
from pathlib import Path

from django.db import transaction

from ..models.skills import SKILL_MD, Skill, SkillFile, parse_skill_md

TEXT_TYPES = ("application/json", "application/xml", "application/javascript", "application/x-sh")


def media_type_of(path: str) -> str:
    if path.endswith(".md"):
        return "text/markdown"
    return mimetypes.guess_type(path)[0] or "application/octet-stream"


def file_row(skill: Skill, path: str, content: bytes) -> SkillFile:
    """An unsaved ``SkillFile``: text when it is UTF-8 of a textual media type, else binary."""
    media_type = media_type_of(path)
    textual = media_type.startswith("text/") or media_type in TEXT_TYPES
    try:
        text = content.decode("utf-8") if textual else None
    except UnicodeDecodeError:
        text = None
    if text is None:
        return SkillFile(skill=skill, path=path, media_type=media_type, is_binary=True, data=content)
    return SkillFile(skill=skill, path=path, media_type=media_type, text=text)


def replace_skill(
    path: str, skill_md: str, files: list[tuple[str, bytes]], tags: list[str] | None = None
) -> Skill:
    """Create or update the skill at ``path`` from its ``SKILL.md`` text and files (validated)."""
    frontmatter, body = parse_skill_md(skill_md)
    with transaction.atomic():
        skill = Skill.objects.filter(path=path).first() or Skill(path=path)
        skill.frontmatter, skill.body = frontmatter, body
        if tags is not None:
            skill.tags = tags
        skill.full_clean()
        skill.save()
        skill.files.all().delete()
        for file_path, content in files:
            row = file_row(skill, file_path, content)
            row.full_clean()
            row.save()
    return skill


def load_skill_folder(root: Path) -> list[str]:
    """Load every skill under ``root``; returns their paths."""
    skill_dirs = sorted(p.parent for p in root.rglob(SKILL_MD) if p.is_file())
    loaded = []
    with transaction.atomic():
        for folder in skill_dirs:
            nested = [d for d in skill_dirs if d != folder and folder in d.parents]
            files = [
                (p.relative_to(folder).as_posix(), p.read_bytes())
                for p in sorted(folder.rglob("*"))
                if p.is_file() and p != folder / SKILL_MD and not any(d in p.parents for d in nested)
            ]
            path = folder.relative_to(root).as_posix()
            replace_skill(path, (folder / SKILL_MD).read_text("utf-8"), files)
            loaded.append(path)
    return loaded
