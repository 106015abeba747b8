"""Agent skills kept in the registry (SEP-2640, the Agent Skills specification agentskills.io).

A ``Skill`` is a folder at ``path`` (``acme/billing/refunds``: a prefix, then the skill's name):
its ``SKILL.md`` is rendered from ``frontmatter`` (YAML, kept as JSON so the wire copy is verbatim)
and ``body``; its other files are ``SkillFile`` rows (text or binary, with size and digest).
Validated at save (``full_clean``: the admin, the API and the loaders call it):

- the final path segment equals ``frontmatter.name`` (SEP-2640 "Resource Mapping") and follows the
  Agent Skills naming rules; ``description`` is 1-1024 characters;
- ``metadata`` keys under ``io.modelcontextprotocol/`` are reserved for MCP extensions ("Frontmatter";
  this extension defines none, so none is accepted);
- at most 512 files and 16 MiB per skill (the conformance suite's ``sep-2640-limit-*`` checks);
- the frontmatter is at most ``MAX_FRONTMATTER_BYTES`` as JSON, and a ``SKILL.md`` is read with
  the project's alias-free YAML loader (``safe_yaml``): a few hundred bytes of aliases would
  otherwise store megabytes (issue 37 item 6);
- no file path escapes the skill (``..``, absolute paths, backslashes) or shadows ``SKILL.md``.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

import yaml
from django.core.exceptions import ValidationError
from django.db import models

from ..changes.publish import ChangeQuerySet
from ..changes.reach import State, Touches, through_parent
from ..validation import safe_yaml
from .concurrency import Versioned
from .history import Recorded
from .remembered import Remembered

NAME_RE = re.compile(r"^(?!-)(?!.*--)[a-z0-9-]{1,64}(?<!-)$")
SEGMENT_RE = re.compile(r"^[A-Za-z0-9._~-]+$")
RESERVED_METADATA_PREFIX = "io.modelcontextprotocol/"
MAX_FILES = 512  # SKILL.md included
MAX_BYTES = 16 * 1024 * 1024
SKILL_MD = "SKILL.md"
SCHEME = "skill://"  # a skill's root URI: SCHEME + its path (SEP-2640), how a selection names it
# name, description (≤ 1024), license, compatibility, a little metadata: a few KB at most.
MAX_FRONTMATTER_BYTES = 64 * 1024


def validate_skill_path(path: str) -> None:
    segments = path.split("/")
    if not all(SEGMENT_RE.match(s) and s not in (".", "..") for s in segments):
        raise ValidationError("A skill path is /-separated segments of letters, digits and . _ ~ - only.")
    if not NAME_RE.match(segments[-1]):
        raise ValidationError(
            "The final segment is the skill's name: 1-64 lowercase letters, digits and hyphens, no "
            "leading, trailing or doubled hyphen (agentskills.io naming rules)."
        )


def file_path_problem(path: str) -> str | None:
    """Why ``path`` cannot be a file of a skill, or None."""
    parts = path.split("/")
    if not path or path.startswith("/") or "\\" in path or any(p in ("", ".", "..") for p in parts):
        return "A file path is relative to the skill, /-separated, without '.', '..' or empty segments."
    if path == SKILL_MD:
        return "SKILL.md is rendered from the skill's frontmatter and body."
    return None


def render_skill_md(frontmatter: dict[str, Any], body: str) -> str:
    head = yaml.safe_dump(frontmatter, sort_keys=False, allow_unicode=True, default_flow_style=False)
    return f"---\n{head}---\n{body}"


def parse_skill_md(text: str) -> tuple[dict[str, Any], str]:
    """``(frontmatter, body)`` of a ``SKILL.md``; ValueError when it has no YAML frontmatter."""
    match = re.match(r"^\ufeff?---\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|$)", text, re.S)
    if match is None:
        raise ValueError("SKILL.md must begin with a --- delimited YAML frontmatter block")
    try:
        frontmatter = safe_yaml.load(match.group(1))
    except safe_yaml.YAMLError as exc:
        raise ValueError(f"SKILL.md frontmatter is not valid YAML: {exc}") from exc
    if not isinstance(frontmatter, dict):
        raise ValueError("SKILL.md frontmatter must be a mapping")
    return frontmatter, text[match.end() :]


class Skill(Remembered, Versioned, Recorded):
    """``version``: the REST API's ETag (``concurrency.py``); every version kept (``history.py``), its
    files' with it."""

    path = models.CharField(
        max_length=512,
        unique=True,
        validators=[validate_skill_path],
        help_text="e.g. git-workflow or acme/billing/refunds; the last segment is the skill's name.",
    )
    frontmatter = models.JSONField(
        default=dict, help_text='SKILL.md frontmatter, e.g. {"name": "refunds", "description": "…"}.'
    )
    body = models.TextField(blank=True, help_text="SKILL.md after its frontmatter (Markdown).")
    tags = models.JSONField(default=list, blank=True, help_text="Not sent to clients; for API key grants.")
    enabled = models.BooleanField(default=True, help_text="Disabled skills are not served.")
    updated_at = models.DateTimeField(auto_now=True)

    objects = ChangeQuerySet.as_manager()
    mcp_kind = "resources"  # SEP-2640: skill files are resources
    remembered = ("path", "tags")

    class Meta:
        ordering = ["path"]

    def __str__(self) -> str:
        return self.path

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[-1]

    @property
    def skill_md(self) -> str:
        return render_skill_md(self.frontmatter, self.body)

    def uris(self) -> list[str]:
        """The resource URIs of this skill's files (for ``resources/updated``)."""
        paths = list(self.files.values_list("path", flat=True)) if self.pk else []
        return [f"skill://{self.path}/{p}" for p in [SKILL_MD, *paths]]

    def change_uris(self) -> list[str]:
        """SEP-2640: a skill's files are resources; their subscribers hear of the change (a moved
        skill: under its old path too, remembered by ``signals.py`` before the save)."""
        uris = [f"skill://{self.path}/SKILL.md"]
        old_path = self.__dict__.get("_old_path")
        if old_path and old_path != self.path:
            uris.append(f"skill://{old_path}/SKILL.md")
        return uris

    def renamed(self) -> tuple[str, str, str] | None:
        """("skills", old root URI, new root URI) when a save moved the skill."""
        stored = self.stored()
        if stored is None or stored["path"] == self.path:
            return None
        return "skills", SCHEME + stored["path"], SCHEME + self.path

    def touches(self) -> Touches:
        """The endpoints whose selection allows the skill (by its root URI) before the save or
        after, or a skill enclosing it: those serve its files too (SEP-2640 nested skills; their
        tags are not known here, so any included tag counts)."""
        stored = self.stored()
        states: set[State] = set()
        for path, tags in ((self.path, self.tags), *(((stored["path"], stored["tags"]),) if stored else ())):
            states.add(State("skills", SCHEME + path, frozenset(tags or ())))
            segments = path.split("/")
            enclosing = ("/".join(segments[:cut]) for cut in range(1, len(segments)))
            states.update(State("skills", SCHEME + outer, None) for outer in enclosing)
        return Touches(states=frozenset(states))

    def clean(self) -> None:
        errors: dict[str, str] = {}
        fm = self.frontmatter
        if not isinstance(fm, dict):
            raise ValidationError({"frontmatter": "The frontmatter must be an object."})
        size = len(json.dumps(fm, ensure_ascii=False, separators=(",", ":")).encode())
        if size > MAX_FRONTMATTER_BYTES:
            raise ValidationError({"frontmatter": f"The frontmatter is {size} bytes as JSON; at most "
                                                  f"{MAX_FRONTMATTER_BYTES} are kept."})
        if fm.get("name") != self.name:
            errors["frontmatter"] = f"frontmatter.name must equal the final path segment {self.name!r}."
        description = fm.get("description")
        if not isinstance(description, str) or not 1 <= len(description) <= 1024:
            errors["frontmatter"] = "frontmatter.description must be a string of 1-1024 characters."
        metadata = fm.get("metadata")
        if metadata is not None and not isinstance(metadata, dict):
            errors["frontmatter"] = "frontmatter.metadata must be an object."
        elif metadata and any(str(k).startswith(RESERVED_METADATA_PREFIX) for k in metadata):
            errors["frontmatter"] = (
                f"metadata keys under {RESERVED_METADATA_PREFIX} are reserved for MCP extensions."
            )
        if not isinstance(self.tags, list) or not all(isinstance(t, str) for t in self.tags):
            errors["tags"] = "Tags must be a list of strings."
        if errors:
            raise ValidationError(errors)


class SkillFile(Recorded):
    skill = models.ForeignKey(Skill, on_delete=models.CASCADE, related_name="files")
    path = models.CharField(max_length=1024, help_text="Relative to the skill, e.g. references/FORMS.md.")
    media_type = models.CharField(max_length=255, default="text/plain")
    text = models.TextField(blank=True, help_text="Content of a text file.")
    data = models.BinaryField(null=True, blank=True, help_text="Content of a binary file.")
    is_binary = models.BooleanField(default=False)
    size = models.PositiveBigIntegerField(default=0, editable=False)
    digest = models.CharField(max_length=71, blank=True, editable=False)

    objects = ChangeQuerySet.as_manager()
    mcp_kind = "resources"
    reached_through = "skill"  # changes/reach.py: it reaches where its skill does

    class Meta:
        ordering = ["skill", "path"]
        constraints = [models.UniqueConstraint(fields=["skill", "path"], name="skill_file_unique_path")]

    def __str__(self) -> str:
        return self.path

    def change_uris(self) -> list[str]:
        return [f"skill://{self.skill.path}/{self.path}"]

    def touches(self) -> Touches:
        return through_parent(self, "skill")  # a file changes its skill, where that skill is served

    @property
    def raw(self) -> bytes:
        return bytes(self.data or b"") if self.is_binary else self.text.encode()

    def clean(self) -> None:
        problem = file_path_problem(self.path)
        if problem:
            raise ValidationError({"path": problem})
        if self.is_binary and self.text:
            raise ValidationError({"text": "A binary file keeps its content in data, not text."})
        if self.skill_id is not None:
            others = SkillFile.objects.filter(skill_id=self.skill_id).exclude(pk=self.pk)
            if others.count() + 2 > MAX_FILES:  # this file and SKILL.md
                raise ValidationError({"path": f"A skill holds at most {MAX_FILES} files, SKILL.md too."})
            total = sum(others.values_list("size", flat=True)) + len(self.raw)
            if total + len(self.skill.skill_md.encode()) > MAX_BYTES:
                raise ValidationError({"data" if self.is_binary else "text": "A skill holds at most 16 MiB."})

    def save(self, *args: Any, **kwargs: Any) -> None:
        raw = self.raw
        self.size = len(raw)
        self.digest = "sha256:" + hashlib.sha256(raw).hexdigest()
        super().save(*args, **kwargs)
