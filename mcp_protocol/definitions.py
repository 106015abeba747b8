"""What a server offers: tools, resources, resource templates and prompts, as immutable values.

A provider hands these to the core; ``versions.py`` decides which fields each protocol revision
sees. Optional fields hold the spec's wire JSON as-is (``annotations``, ``icons``, ``meta``) so the
core serialises them without translation. Nothing here does I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .endpoints import EndpointSpec
from .skills import SKILL_MD, Skill, SkillIndex
from .uri_template import serving_template

JSON = Any
JSONObject = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Tool:
    name: str
    input_schema: JSONObject
    description: str | None = None
    title: str | None = None
    output_schema: JSONObject | None = None
    annotations: JSONObject | None = None
    icons: tuple[JSONObject, ...] | None = None
    meta: JSONObject | None = None
    execution: JSONObject | None = None
    tags: tuple[str, ...] = ()  # not on the wire: for grants (auth/principal.py)
    # Not on the wire either: what the provider runs the tool with, put there when it built the
    # snapshot (the registry's ToolSpec), so a call resolves its tool once, in the snapshot.
    target: Any = field(default=None, compare=False, repr=False)
    # Not on the wire: who must approve a call before it runs (approvals.py: none, confirm, staff).
    approval: str = "none"
    # Not on the wire: the source it is served from, when not this server (a mirrored upstream's
    # name, issue 40); ``Snapshot.sources`` says what that source can do (``features.py``).
    origin: str | None = None


@dataclass(frozen=True, slots=True)
class Resource:
    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None
    annotations: JSONObject | None = None
    icons: tuple[JSONObject, ...] | None = None
    meta: JSONObject | None = None
    tags: tuple[str, ...] = ()
    # Not on the wire: the source it is served from, when not this server (a mirrored upstream's
    # name, issue 40); ``Snapshot.sources`` says what that source can do (``features.py``).
    origin: str | None = None


@dataclass(frozen=True, slots=True)
class ResourceTemplate:
    uri_template: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    annotations: JSONObject | None = None
    icons: tuple[JSONObject, ...] | None = None
    meta: JSONObject | None = None
    tags: tuple[str, ...] = ()
    # Not on the wire: the source it is served from, when not this server (a mirrored upstream's
    # name, issue 40); ``Snapshot.sources`` says what that source can do (``features.py``).
    origin: str | None = None


@dataclass(frozen=True, slots=True)
class PromptArgument:
    name: str
    title: str | None = None
    description: str | None = None
    required: bool = False


@dataclass(frozen=True, slots=True)
class Prompt:
    name: str
    title: str | None = None
    description: str | None = None
    arguments: tuple[PromptArgument, ...] = ()
    icons: tuple[JSONObject, ...] | None = None
    meta: JSONObject | None = None
    tags: tuple[str, ...] = ()
    # Not on the wire: the source it is served from, when not this server (a mirrored upstream's
    # name, issue 40); ``Snapshot.sources`` says what that source can do (``features.py``).
    origin: str | None = None


@dataclass(frozen=True, slots=True)
class Completion:
    """The result of ``completion/complete``: at most 100 values (server/utilities/completion.mdx)."""

    values: tuple[str, ...] = ()
    total: int | None = None
    has_more: bool = False


@dataclass(frozen=True, slots=True)
class Snapshot:
    """One consistent, ordered view of everything a provider serves.

    The order of each tuple is the listing order (deterministic: 2026-07-28 server/tools.mdx makes
    it a SHOULD). ``version`` changes whenever any definition changes; cursors may embed it.
    """

    version: str
    tools: tuple[Tool, ...] = ()
    resources: tuple[Resource, ...] = ()
    resource_templates: tuple[ResourceTemplate, ...] = ()
    prompts: tuple[Prompt, ...] = ()
    skills: tuple[Skill, ...] = ()  # SEP-2640; each with its nested skills' files (skills.py)
    # The virtual servers (endpoints.py): enabled ones only, by slug. Not part of ``version``'s
    # meaning for lists: a view of one endpoint names its selection (``endpoints.select``).
    endpoints: tuple[EndpointSpec, ...] = ()
    # What each source other than this server can do, by the ``origin`` its definitions carry:
    # the capability flags (``features.FLAGS``) it declared (issue 40 item 3). Empty: every
    # definition is this server's own.
    sources: Mapping[str, frozenset[str]] = field(default_factory=dict)
    _tools_by_name: dict[str, Tool] = field(default_factory=dict, repr=False, compare=False)
    _prompts_by_name: dict[str, Prompt] = field(default_factory=dict, repr=False, compare=False)
    _resources_by_uri: dict[str, Resource] = field(default_factory=dict, repr=False, compare=False)
    _templates_by_text: dict[str, ResourceTemplate] = field(default_factory=dict, repr=False, compare=False)
    _skill_index: list[SkillIndex] = field(default_factory=list, repr=False, compare=False)
    _endpoints_by_slug: dict[str, EndpointSpec] = field(default_factory=dict, repr=False, compare=False)
    # What resources/list shows: the resources, then each skill's SKILL.md (SEP-2640 "Resource
    # Metadata": name and description from its frontmatter, text/markdown).
    listed_resources: tuple[Resource, ...] = field(default=(), init=False, repr=False, compare=False)
    # The capability flags this snapshot's content supports (``features.supported``), computed
    # once here, at snapshot time: None when some of it is this server's own (everything).
    features: frozenset[str] | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._tools_by_name.update((t.name, t) for t in self.tools)
        self._prompts_by_name.update((p.name, p) for p in self.prompts)
        self._resources_by_uri.update((r.uri, r) for r in self.resources)
        self._templates_by_text.update((t.uri_template, t) for t in self.resource_templates)
        self._endpoints_by_slug.update((e.slug, e) for e in self.endpoints)
        listed = self.resources + tuple(_skill_md_resource(s) for s in self.skills)
        object.__setattr__(self, "listed_resources", listed)
        if self.sources:
            object.__setattr__(self, "features", supported(self))

    def resource_template(self, uri_template: str) -> ResourceTemplate | None:
        return self._templates_by_text.get(uri_template)

    def serving_template(self, uri: str) -> tuple[ResourceTemplate, dict[str, str]] | None:
        """The template that serves ``uri`` and the variables it reads (``uri_template``'s rule:
        most literal characters, fewest variables, then the template text), or None."""
        served = serving_template(tuple(self._templates_by_text), uri)
        return None if served is None else (self._templates_by_text[served[0]], served[1])

    def tool(self, name: str) -> Tool | None:
        return self._tools_by_name.get(name)

    def prompt(self, name: str) -> Prompt | None:
        return self._prompts_by_name.get(name)

    def resource(self, uri: str) -> Resource | None:
        return self._resources_by_uri.get(uri)

    def endpoint(self, slug: str) -> EndpointSpec | None:
        """The enabled virtual server ``slug`` (``endpoints.py``), or None."""
        return self._endpoints_by_slug.get(slug)

    @property
    def skill_index(self) -> SkillIndex:
        """Lookups over ``skills``, built on first use (most snapshots serve no skills)."""
        if not self._skill_index:
            self._skill_index.append(SkillIndex(self.skills))
        return self._skill_index[0]


def _skill_md_resource(skill: Skill) -> Resource:
    md = next(f for f in skill.files if f.path == SKILL_MD)
    description = skill.frontmatter.get("description")
    return Resource(
        uri=skill.uri,
        name=str(skill.frontmatter.get("name")),
        description=description if isinstance(description, str) else None,
        mime_type=md.mime_type,
        size=md.size,
        tags=skill.tags,
    )


def supported(snapshot: Snapshot) -> frozenset[str] | None:
    """The capability flags (``features.FLAGS``) ``snapshot``'s content supports, or None for
    "everything the provider offers" (the rule: ``features.py``)."""
    if snapshot.skills:
        return None
    origins: set[str] = set()
    flags: set[str] = set()
    groups = (("tools", snapshot.tools), ("resources", snapshot.resources),
              ("templates", snapshot.resource_templates), ("prompts", snapshot.prompts))
    for kind, group in groups:
        for definition in group:
            origin = definition.origin
            if origin is None:
                return None  # one of ours
            origins.add(origin)
            flags.add(kind)
    if not origins:
        return None
    declared: set[str] = set()
    for origin in origins:
        declared |= snapshot.sources.get(origin, frozenset())
    if "logging" in declared:
        flags.add("logging")
    if "completions" in declared and flags & {"prompts", "templates"}:
        flags.add("completions")  # completion/complete completes prompt and template arguments
    if "templates" in flags:
        flags.discard("templates")
        flags.add("resources")
    if "resources_subscribe" in declared and snapshot.resources:
        flags.add("resources_subscribe")
    return frozenset(flags)
