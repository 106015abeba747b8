"""The ``skills`` section of the registry document (``transfer/documents.py``), matched by ``path``::

    {"path": "acme/billing/refunds", "frontmatter": {...}, "body": "...", "tags": [], "enabled": true,
     "files": [{"path": "examples/email.md", "media_type": "text/markdown", "text": "..."},
               {"path": "assets/logo.png", "media_type": "image/png", "base64": "iVBO..."}]}

A file holds ``text`` or ``base64`` (binary content). Validated whole like the other sections
(``full_clean`` of the skill and each file, with JSON pointers); a skill whose fields and files are
unchanged is not written (importing an export publishes nothing). In ``replace`` mode skills the
document does not name are deleted, but only when the document has a ``skills`` section: older
documents, written before skills existed, leave the skills alone.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import NON_FIELD_ERRORS, ValidationError

from ..models.skills import Skill, SkillFile
from ..validation.validators import json_pointer

SECTION = "skills"
FIELDS = ("path", "frontmatter", "body", "tags", "enabled")
FILE_FIELDS = {"path", "media_type", "text", "base64"}
Report = Callable[[list[Any], str], None]


def export_skills() -> list[dict[str, Any]]:
    items = []
    for row in Skill.objects.order_by("path").prefetch_related("files"):
        item: dict[str, Any] = {name: getattr(row, name) for name in FIELDS}
        item["files"] = [file_item(f) for f in row.files.all()]
        items.append(item)
    return items


def file_item(row: Any) -> dict[str, Any]:
    """A file as a document item (``row``: a ``SkillFile`` or one of its historical versions)."""
    out: dict[str, Any] = {"path": row.path, "media_type": row.media_type}
    if row.is_binary:
        out["base64"] = base64.b64encode(bytes(row.data or b"")).decode()
    else:
        out["text"] = row.text
    return out


def file_of(item: dict[str, Any]) -> SkillFile:
    """An unsaved file from a document item (``binascii.Error`` or ``ValueError``: bad base64)."""
    row = SkillFile(path=item.get("path", ""), media_type=item.get("media_type", "text/plain"))
    if "base64" in item:
        row.data, row.is_binary = base64.b64decode(item["base64"], validate=True), True
    else:
        row.text = item["text"]
    return row


@dataclass
class SkillPlan:
    row: Skill
    files: list[SkillFile]
    changed: bool


def _errors(exc: ValidationError, where: list[Any], report: Report) -> None:
    for name, messages in exc.message_dict.items():
        for message in messages:
            report(where if name == NON_FIELD_ERRORS else [*where, name], message)


def plan_skills(items: Any, report: Report) -> list[SkillPlan]:
    if not isinstance(items, list):
        report([SECTION], "A section must be a JSON list.")
        return []
    existing = {s.path: s for s in Skill.objects.prefetch_related("files")}
    plans, seen = [], set()
    for index, raw in enumerate(items):
        where: list[Any] = [SECTION, index]
        if not isinstance(raw, dict) or not isinstance(raw.get("path"), str):
            report(where, "Each item must be an object with a 'path'.")
            continue
        for name in sorted(set(raw) - {*FIELDS, "files"}):
            report([*where, name], f"Unknown field {name!r}.")
        if raw["path"] in seen:
            report([*where, "path"], f"{raw['path']!r} appears twice.")
        seen.add(raw["path"])
        row = existing.get(raw["path"]) or Skill()
        before = {n: getattr(row, n) for n in FIELDS} if row.pk else None
        old_files = [file_item(f) for f in row.files.all()] if row.pk else None
        for name in set(raw) & set(FIELDS):
            setattr(row, name, raw[name])
        try:
            row.full_clean()
        except ValidationError as exc:
            _errors(exc, where, report)
            continue
        files = _plan_files(row, raw.get("files", []), [*where, "files"], report)
        wanted = [file_item(f) for f in files]
        changed = before != {n: getattr(row, n) for n in FIELDS} or old_files != wanted
        plans.append(SkillPlan(row, files, changed))
    return plans


def _plan_files(skill: Skill, items: Any, where: list[Any], report: Report) -> list[SkillFile]:
    if not isinstance(items, list):
        report(where, "Must be a JSON list.")
        return []
    files, paths = [], set()
    for index, raw in enumerate(items):
        path = [*where, index]
        if not isinstance(raw, dict) or set(raw) - FILE_FIELDS or ("text" in raw) == ("base64" in raw):
            report(path, f"Must be an object of {sorted(FILE_FIELDS)} with one of text and base64.")
            continue
        try:
            row = file_of(raw)
        except (binascii.Error, ValueError, TypeError):
            report([*path, "base64"], "Not valid base64.")
            continue
        try:
            row.full_clean(exclude=["skill"])
        except ValidationError as exc:
            _errors(exc, path, report)
            continue
        if row.path in paths:
            report([*path, "path"], f"{row.path!r} appears twice.")
        paths.add(row.path)
        files.append(row)
    total = sum(len(f.raw) for f in files)
    from ..models import skills as skill_models

    if len(files) + 1 > skill_models.MAX_FILES or total > skill_models.MAX_BYTES:
        report(where, f"A skill holds at most {skill_models.MAX_FILES} files and 16 MiB.")
    return files


def apply_skills(plans: list[SkillPlan], mode: str, present: bool) -> dict[str, Any]:
    report: dict[str, Any] = {"created": [], "updated": [], "deleted": [], "unchanged": 0}
    if mode == "replace" and present:
        doomed = Skill.objects.exclude(path__in=[p.row.path for p in plans])
        report["deleted"] = sorted(doomed.values_list("path", flat=True))
        for row in doomed:
            row.delete()
    for plan in plans:
        if not plan.changed:
            report["unchanged"] += 1
            continue
        report["created" if plan.row.pk is None else "updated"].append(plan.row.path)
        plan.row.save()
        plan.row.files.all().delete()
        for f in plan.files:
            f.skill = plan.row
            f.save()
    return report


def report_into(problems: list[Any], problem: Callable[[str, str], Any]) -> Report:
    def report(where: list[Any], message: str) -> None:
        problems.append(problem(json_pointer(where), message))

    return report
