"""Skills from a folder on disk (a team keeps its skills in git and syncs them) and from uploads.

``load_skill_folder(root)`` makes every folder under ``root`` holding a ``SKILL.md`` a skill whose
path is that folder's path relative to ``root`` (``acme/billing/refunds``). A skill's own files are
those under its folder outside any nested skill's folder: the nested skill holds those, and the
snapshot adds them to the enclosing skill again (SEP-2640 "Nested skills"). Idempotent: a skill is
created or updated by path and its files replaced, all in one transaction (one change published).

Only what lies inside ``root`` is read: a symbolic link whose target leaves it (a ``SKILL.md`` or a
file linked to ``/etc/passwd``, a folder linked to ``/``) is skipped and named in ``skipped``
(issue 37 item 7), so a synced repository cannot make the server publish its own files. Links
that stay inside ``root`` are read as the files they point to.
"""

from __future__ import annotations

import mimetypes
from pathlib import Path
from typing import Any

from django.db import transaction

from ..models.skills import SKILL_MD, Skill, SkillFile, parse_skill_md
from .transfer import file_item

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


def leaves(root: Path, path: Path) -> bool:
    """Whether ``path``, links followed, lies outside ``root`` (a resolved folder)."""
    return not path.resolve().is_relative_to(root)


FolderSkill = tuple[str, str, list[tuple[str, bytes]]]  # (path, SKILL.md text, [(file path, bytes)])


def read_skill_folder(root: Path, skipped: list[str] | None = None) -> list[FolderSkill]:
    """Every skill under ``root`` as ``(path, SKILL.md text, [(file path, bytes)])``, read from
    disk. Links leaving ``root`` are not followed: their paths (relative to ``root``) are appended
    to ``skipped``."""
    inside = root.resolve()
    refused = sorted(p for p in root.rglob("*") if p.is_symlink() and leaves(inside, p))
    if skipped is not None:
        skipped.extend(p.relative_to(root).as_posix() for p in refused)
    skill_dirs = sorted(
        p.parent for p in root.rglob(SKILL_MD) if p.is_file() and not leaves(inside, p)
    )
    skills = []
    for folder in skill_dirs:
        nested = [d for d in skill_dirs if d != folder and folder in d.parents]
        files = [
            (p.relative_to(folder).as_posix(), p.read_bytes())
            for p in sorted(folder.rglob("*"))
            if p.is_file()
            and p != folder / SKILL_MD
            and not any(d in p.parents for d in nested)
            and not leaves(inside, p)
        ]
        skills.append((folder.relative_to(root).as_posix(), (folder / SKILL_MD).read_text("utf-8"), files))
    return skills


def load_skill_folder(root: Path, skipped: list[str] | None = None) -> list[str]:
    """Load every skill under ``root`` (``read_skill_folder``); returns their paths."""
    loaded = []
    with transaction.atomic():
        for path, skill_md, files in read_skill_folder(root, skipped):
            replace_skill(path, skill_md, files)
            loaded.append(path)
    return loaded


def document_items(root: Path) -> list[dict[str, Any]]:
    """The skills under ``root`` as items of a registry document's ``skills`` section
    (``skills/transfer.py``): imported, an unchanged skill is not written again."""
    items = []
    for path, skill_md, files in read_skill_folder(root):
        frontmatter, body = parse_skill_md(skill_md)
        rows = [file_row(Skill(), name, content) for name, content in files]
        items.append({"path": path, "frontmatter": frontmatter, "body": body,
                      "files": [file_item(row) for row in rows]})
    return items
