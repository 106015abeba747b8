"""The admin of skills (SEP-2640): files edited inline, a folder uploaded as a zip, the rendered
``SKILL.md`` previewed (escaped: skill content is untrusted text, SEP-2640 "Security"); its
versions, diffs and reverts as every definition's (``history/admin.py``)."""

from __future__ import annotations

import zipfile
from typing import Any

from django import forms
from django.contrib import admin
from django.core.exceptions import ValidationError
from django.db import transaction
from django.http import HttpRequest
from django.utils.html import format_html

from ..history.admin import HistoryAdminMixin
from ..models.skills import (
    MAX_BYTES,
    MAX_FILES,
    SKILL_MD,
    Skill,
    SkillFile,
    file_path_problem,
    parse_skill_md,
)
from ..skills.loading import file_row


def read_zip(upload: Any) -> tuple[dict[str, Any], str, list[tuple[str, bytes]]]:
    """``(frontmatter, body, files)`` of a zipped skill folder (one top folder is stripped)."""
    try:
        archive = zipfile.ZipFile(upload)
    except zipfile.BadZipFile as exc:
        raise ValidationError("Not a zip file.") from exc
    entries = [i for i in archive.infolist() if not i.is_dir()]
    if len(entries) > MAX_FILES or sum(i.file_size for i in entries) > MAX_BYTES:
        raise ValidationError(f"A skill holds at most {MAX_FILES} files and 16 MiB.")
    names = [i.filename for i in entries]
    tops = {n.split("/", 1)[0] for n in names}
    strip = len(tops) == 1 and SKILL_MD not in names and all("/" in n for n in names)
    files: list[tuple[str, bytes]] = []
    skill_md: bytes | None = None
    for info in entries:
        path = info.filename.split("/", 1)[1] if strip else info.filename
        try:
            content = archive.read(info)
        except (zipfile.BadZipFile, OSError, RuntimeError, NotImplementedError) as exc:
            # A corrupt entry, a CRC mismatch, an encrypted or unsupported one: a form error.
            raise ValidationError(f"{info.filename}: cannot be read from the zip ({exc}).") from exc
        if path == SKILL_MD:
            skill_md = content
            continue
        problem = file_path_problem(path)
        if problem:
            raise ValidationError(f"{path}: {problem}")
        files.append((path, content))
    if skill_md is None:
        raise ValidationError("The zip has no SKILL.md at its root.")
    try:
        frontmatter, body = parse_skill_md(skill_md.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise ValidationError(str(exc)) from exc
    return frontmatter, body, files


class SkillForm(forms.ModelForm):
    upload = forms.FileField(
        required=False, help_text="A zip of the skill folder: replaces SKILL.md and every file."
    )

    class Meta:
        model = Skill
        fields = ["path", "frontmatter", "body", "tags", "enabled"]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["frontmatter"].required = False  # an upload brings its own; the model checks it

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        upload = data.get("upload")
        if upload:
            try:
                frontmatter, body, files = read_zip(upload)
            except ValidationError as exc:
                raise ValidationError({"upload": exc.messages}) from exc
            self.instance.frontmatter = data["frontmatter"] = frontmatter
            self.instance.body = data["body"] = body
            self.uploaded_files = files
        return data


class SkillFileInline(admin.StackedInline):
    model = SkillFile
    extra = 0
    fields = ["path", "media_type", "text", "is_binary", "size", "digest"]
    readonly_fields = ["size", "digest"]


@admin.register(Skill)
class SkillAdmin(HistoryAdminMixin, admin.ModelAdmin):
    form = SkillForm
    inlines = [SkillFileInline]
    list_display = ["path", "enabled", "updated_at"]
    search_fields = ["path"]
    readonly_fields = ["skill_md_preview"]

    @admin.display(description="SKILL.md")
    def skill_md_preview(self, obj: Skill) -> str:
        return format_html('<pre class="skill-md-preview">{}</pre>', obj.skill_md if obj.pk else "")

    def save_related(self, request: HttpRequest, form: Any, formsets: Any, change: bool) -> None:
        files = getattr(form, "uploaded_files", None)
        with transaction.atomic():
            super().save_related(request, form, formsets, change)
            if files is not None:  # the upload replaces every file, inline edits included
                skill = form.instance
                skill.files.all().delete()
                for path, content in files:
                    row = file_row(skill, path, content)
                    row.full_clean()
                    row.save()
