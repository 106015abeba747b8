"""Agent skills as immutable values, and the index the core serves them from (SEP-2640).

The extension ``io.modelcontextprotocol/skills`` maps each file of a skill directory to a resource
``skill://<skill-path>/<file-path>`` (SEP-2640 "Resource Mapping"); the skill's root and every
folder below it are directory resources (``inode/directory``, no trailing slash: "Directory
resources"). A ``Skill`` holds its complete file set, nested skills' files included ("Resources":
completeness extends to nested skills): ``with_nested`` adds them, so a provider hands over each
skill's own files and the enclosing skills get theirs. ``SkillIndex`` answers, in one dict lookup
each, which file a URI names and which children a directory has; the snapshot builds it once.

Digests are ``sha256:{hex}`` of the raw bytes ("Integrity and verification"). Nothing here does I/O.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

EXTENSION = "io.modelcontextprotocol/skills"
SCHEME = "skill://"
SKILL_MD = "SKILL.md"
DIRECTORY_MIME = "inode/directory"
MARKDOWN_MIME = "text/markdown"


def digest_of(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


@dataclass(frozen=True, slots=True)
class SkillFile:
    """One file of a skill: ``path`` relative to the skill root, ``/``-separated. ``text`` for a
    text file (served as ``text``), else ``data`` (served as a base64 ``blob``)."""

    path: str
    mime_type: str
    text: str | None = None
    data: bytes | None = None
    size: int = field(default=0, compare=False)
    digest: str = field(default="", compare=False)
    # The base64 text of ``data``, made at the first read and kept with the snapshot: each read
    # encoding it again cost 5.9 ms for 1 MiB against 2.0 ms for a text file of that size
    # (bench/results/2026-11-26-skills-core.md).
    _blob: str | None = field(default=None, init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        if (self.text is None) == (self.data is None):
            raise ValueError(f"skill file {self.path!r} needs exactly one of text and data")
        raw = self.raw
        object.__setattr__(self, "size", len(raw))
        object.__setattr__(self, "digest", digest_of(raw))

    @property
    def raw(self) -> bytes:
        return self.data if self.data is not None else (self.text or "").encode()

    def contents(self, uri: str) -> dict[str, Any]:
        """The ``resources/read`` contents item for this file at ``uri``."""
        if self.text is not None:
            return {"uri": uri, "mimeType": self.mime_type, "text": self.text}
        blob = self._blob
        if blob is None:
            blob = base64.b64encode(self.raw).decode()
            object.__setattr__(self, "_blob", blob)
        return {"uri": uri, "mimeType": self.mime_type, "blob": blob}


@dataclass(frozen=True, slots=True)
class Skill:
    """A skill at ``path`` (``acme/billing/refunds``), its ``SKILL.md`` frontmatter as JSON
    (verbatim: "Frontmatter") and its files, ``SKILL.md`` among them. ``tags`` are for grants."""

    path: str
    frontmatter: Mapping[str, Any]
    files: tuple[SkillFile, ...]
    tags: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not any(f.path == SKILL_MD for f in self.files):
            raise ValueError(f"skill {self.path!r} has no {SKILL_MD}")
        if self.path.rsplit("/", 1)[-1] != self.frontmatter.get("name"):
            raise ValueError(f"skill {self.path!r}: the final path segment must equal its name")

    @property
    def root(self) -> str:
        return SCHEME + self.path

    @property
    def uri(self) -> str:
        return f"{SCHEME}{self.path}/{SKILL_MD}"

    def file_uri(self, file: SkillFile) -> str:
        return f"{SCHEME}{self.path}/{file.path}"

    def to_wire(self) -> dict[str, Any]:
        """The skill entry of ``skills/list`` and ``skills/get`` ("Enumeration via skills/list")."""
        return {
            "uri": self.uri,
            "frontmatter": dict(self.frontmatter),
            "resources": [
                {"uri": self.file_uri(f), "digest": f.digest, "size": f.size} for f in self.files
            ],
        }


def with_nested(skills: Iterable[Skill]) -> tuple[Skill, ...]:
    """``skills`` with each one's files completed by the files of the skills nested in it.

    Each skill hands its files to its ancestors among ``skills`` (its path's prefixes: as many
    lookups as it has segments), so a catalogue of n skills costs O(n x depth), not O(n^2)."""
    given = tuple(skills)
    by_path = {s.path: s for s in given}
    extra: dict[str, list[SkillFile]] = {}
    for inner in given:
        segments = inner.path.split("/")
        for cut in range(1, len(segments)):
            outer = "/".join(segments[:cut])
            if outer in by_path:
                prefix = "/".join(segments[cut:]) + "/"
                extra.setdefault(outer, []).extend(replace(f, path=prefix + f.path) for f in inner.files)
    out = []
    for skill in given:
        added = extra.get(skill.path)
        if not added:
            out.append(skill)
            continue
        own = {f.path for f in skill.files}
        kept = []
        for f in added:  # a path the enclosing skill also has keeps the enclosing skill's file
            if f.path not in own:
                own.add(f.path)
                kept.append(f)
        out.append(replace(skill, files=skill.files + tuple(kept)))
    return tuple(out)


def _entry(uri: str, name: str, mime_type: str, size: int | None = None) -> dict[str, Any]:
    entry: dict[str, Any] = {"uri": uri, "name": name, "mimeType": mime_type}
    if size is not None:
        entry["size"] = size
    return entry


class SkillIndex:
    """Lookups over one snapshot's skills: by ``SKILL.md`` URI, by file URI, by directory URI."""

    __slots__ = ("_by_uri", "_dirs", "_files")

    def __init__(self, skills: Iterable[Skill]) -> None:
        self._by_uri: dict[str, Skill] = {}
        self._files: dict[str, tuple[Skill, SkillFile]] = {}
        dirs: dict[str, dict[str, dict[str, Any]]] = {}
        for skill in skills:
            self._by_uri[skill.uri] = skill
            dirs.setdefault(skill.root, {})
            for f in skill.files:
                uri = skill.file_uri(f)
                self._files.setdefault(uri, (skill, f))
                parent, _, name = uri.rpartition("/")
                dirs.setdefault(parent, {}).setdefault(uri, _entry(uri, name, f.mime_type, f.size))
                # Every folder between the file and the skill root is a directory resource.
                while parent != skill.root:
                    above, _, dir_name = parent.rpartition("/")
                    dirs.setdefault(above, {}).setdefault(parent, _entry(parent, dir_name, DIRECTORY_MIME))
                    parent = above
        self._dirs: dict[str, tuple[dict[str, Any], ...]] = {
            uri: tuple(children[k] for k in sorted(children)) for uri, children in dirs.items()
        }

    def skill(self, uri: str) -> Skill | None:
        return self._by_uri.get(uri)

    def file(self, uri: str) -> tuple[Skill, SkillFile] | None:
        return self._files.get(uri)

    def directory(self, uri: str) -> tuple[dict[str, Any], ...] | None:
        """The direct children of directory ``uri`` (sorted by URI), or None if it is none."""
        return self._dirs.get(uri)
