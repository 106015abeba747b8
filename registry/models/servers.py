"""Virtual servers: one deployment, many MCP endpoints (``/mcp/<slug>``), each its own server to a
client, with its own selection of definitions and its own audience.

A ``VirtualServer`` row is what the operator edits (admin, REST API, import/export, with history
and revert like any definition); the snapshot carries it to every worker as an
``mcp_protocol.endpoints.EndpointSpec`` (only enabled ones), so serving an endpoint never touches
the database. The selection is kept by *name* (tool names, resource URIs, template texts, prompt
names, skill root URIs) rather than by foreign key: definitions in code, and rows mirrored from
other servers, are selected the same way, an export reads as the API body, and each version in the
history is the whole selection. Tags include and exclude (an excluded tag wins).
"""

from __future__ import annotations

import re
from typing import Any

from django.core.exceptions import ValidationError
from django.db import models

from mcp_protocol.auth.principal import Rate
from mcp_protocol.endpoints import (
    AUTH_MODES,
    CALL_TOOL_NAME,
    DEFAULT_SEARCH_THRESHOLD,
    RESERVED_SLUGS,
    SEARCH_TOOL_NAME,
    SLUG,
    EndpointAccess,
    EndpointSpec,
    Selection,
    ToolSearch,
)

from ..changes.publish import ChangeQuerySet
from ..changes.reach import Touches
from ..validation.validators import validate_icons, validate_string_list, validate_tags
from .concurrency import Versioned
from .history import Recorded
from .remembered import Remembered

_TOOL_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")


def validate_slug(value: str) -> None:
    if not SLUG.match(value or ""):
        raise ValidationError(
            "A slug is one URL path segment: lower-case letters, digits, '-' and '_', starting with "
            "a letter or digit, at most 64 characters.",
            code="invalid_slug",
        )
    if value in RESERVED_SLUGS:
        raise ValidationError(f"{value!r} is a path the site uses: choose another slug.",
                              code="reserved_slug")


def validate_auth_modes(value: Any) -> None:
    validate_string_list(value)
    unknown = sorted(set(value) - set(AUTH_MODES))
    if unknown:
        raise ValidationError(f"Unknown auth modes {unknown}: choose among {list(AUTH_MODES)}.")


def validate_tool_name(value: str) -> None:
    # A tool name as 2025-11-25 server/tools.mdx "Tool Names" advises: 1-128 of A-Z a-z 0-9 _ - .
    if not _TOOL_NAME.match(value or ""):
        raise ValidationError("1 to 128 characters among letters, digits, '_', '-' and '.'.")


def validate_rate(value: str) -> None:
    try:
        Rate.parse(value)
    except ValueError as exc:
        raise ValidationError(f"{exc} (e.g. 60/60 for 60 requests a minute)") from None


class VirtualServer(Remembered, Versioned, Recorded):
    # A change of a server's row changes every list of that server's endpoint, and only its own.
    mcp_kind = "servers"
    remembered = ("slug",)

    slug = models.CharField(
        max_length=64, unique=True, validators=[validate_slug],
        help_text="The endpoint's path segment: the server is served at /mcp/<slug>.",
    )
    name = models.CharField(max_length=128, help_text="serverInfo.name, as clients see it.")
    title = models.CharField(max_length=255, blank=True, help_text="serverInfo.title: a human-readable name.")
    # ``version`` is Versioned's (the ETag); this is the one clients see.
    server_version = models.CharField(max_length=64, default="1.0.0", help_text="serverInfo.version.")
    description = models.TextField(blank=True, help_text="Shown in the server card and the site catalog.")
    instructions = models.TextField(blank=True, help_text="The instructions this endpoint gives clients.")
    icons = models.JSONField(default=list, blank=True, validators=[validate_icons])
    website_url = models.URLField(blank=True, help_text="serverInfo.websiteUrl.")
    enabled = models.BooleanField(default=True, help_text="A disabled server's endpoint answers 404.")

    tools = models.JSONField(default=list, blank=True, validators=[validate_string_list],
                             help_text="Tool names this server serves.")
    resources = models.JSONField(default=list, blank=True, validators=[validate_string_list],
                                 help_text="Resource URIs this server serves.")
    resource_templates = models.JSONField(default=list, blank=True, validators=[validate_string_list],
                                          help_text="Resource template texts (uri_template) it serves.")
    prompts = models.JSONField(default=list, blank=True, validators=[validate_string_list],
                               help_text="Prompt names this server serves.")
    skills = models.JSONField(default=list, blank=True, validators=[validate_string_list],
                              help_text="Skill root URIs (skill://<path>) this server serves.")
    include_tags = models.JSONField(default=list, blank=True, validators=[validate_tags],
                                    help_text="Definitions carrying one of these tags join the server.")
    exclude_tags = models.JSONField(default=list, blank=True, validators=[validate_tags],
                                    help_text="Definitions carrying one of these tags never do (this wins).")

    auth_modes = models.JSONField(
        default=list, blank=True, validators=[validate_auth_modes],
        help_text='Among "open", "keys", "oauth"; empty: what the deployment accepts (MCP_AUTH).',
    )
    api_keys = models.JSONField(default=list, blank=True, validators=[validate_string_list],
                                help_text="Prefixes of the API keys that may use it; empty: every key.")
    oauth_scopes = models.JSONField(default=list, blank=True, validators=[validate_string_list],
                                    help_text="A token needs one of these scopes; empty: any token.")
    rate_limit = models.CharField(max_length=32, blank=True, validators=[validate_rate],
                                  help_text="Per-caller rate on this endpoint, N/S; empty: the default.")

    # Tool search (issue 41, docs/guides/tool-search.md): how tools/list shows the server's tools.
    class ToolSearchMode(models.TextChoices):
        OFF = "off", "Off: tools/list lists every tool"
        ON = "on", "On: tools/list lists search_tools, call_tool and the pinned tools"
        AUTO = "auto", "Auto: on when the caller may see more tools than the threshold"

    tool_search = models.CharField(max_length=8, choices=ToolSearchMode.choices, default=ToolSearchMode.OFF,
                                   help_text="Whether clients find the tools by searching.")
    tool_search_threshold = models.PositiveIntegerField(
        default=DEFAULT_SEARCH_THRESHOLD,
        help_text="Auto: search mode when the caller's view holds more tools than this.",
    )
    search_tool_name = models.CharField(
        max_length=128, default=SEARCH_TOOL_NAME, validators=[validate_tool_name],
        help_text="The search meta-tool's name (it shadows a tool of that name in search mode).",
    )
    call_tool_name = models.CharField(
        max_length=128, default=CALL_TOOL_NAME, validators=[validate_tool_name],
        help_text="The call meta-tool's name (it shadows a tool of that name in search mode).",
    )

    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = ChangeQuerySet.as_manager()

    class Meta:
        ordering = ["slug"]
        verbose_name = "virtual server"

    def __str__(self) -> str:
        return self.slug

    def selection(self) -> Selection:
        """What the server serves, as the core filters a snapshot by (``endpoints.Selection``)."""
        return Selection.of(
            tools=self.tools, resources=self.resources, resource_templates=self.resource_templates,
            prompts=self.prompts, skills=self.skills,
            include_tags=self.include_tags, exclude_tags=self.exclude_tags,
        )

    def endpoint_spec(self) -> EndpointSpec:
        """The endpoint as the snapshot carries it to every worker (``snapshot.build_state``)."""
        return EndpointSpec(
            slug=self.slug,
            name=self.name,
            version=self.server_version,
            title=self.title or None,
            instructions=self.instructions or None,
            icons=tuple(self.icons) if self.icons else None,
            website_url=self.website_url or None,
            description=self.description or None,
            selection=self.selection(),
            access=EndpointAccess(
                modes=frozenset(self.auth_modes),
                keys=frozenset(self.api_keys) or None,
                scopes=frozenset(self.oauth_scopes) or None,
                rate=self.rate_limit or None,
            ),
            tool_search=self.search_spec(),
        )

    def search_spec(self) -> ToolSearch:
        """Its tool search mode, as the core serves it (``methods/tool_search.py``)."""
        return ToolSearch(mode=self.tool_search, threshold=self.tool_search_threshold,
                          search_tool=self.search_tool_name, call_tool=self.call_tool_name)

    def clean(self) -> None:
        super().clean()
        if self.search_tool_name and self.search_tool_name == self.call_tool_name:
            raise ValidationError({"call_tool_name": "The two meta-tools need different names."})

    @classmethod
    def carry_rename(cls, kind: str, old: str, new: str, using: str | None = None) -> list[VirtualServer]:
        """A definition renamed (``kind``: its ``Selection`` field) stays in the servers that name
        it: each is saved with the new name (a version in the rename's change set, a ``servers``
        change of its endpoint). Every server is read: renames are rare, and JSON ``contains`` is
        not portable (SQLite)."""
        carried = []
        for server in cls.objects.using(using).all():
            names: list[str] = getattr(server, kind)
            if old not in names:
                continue
            setattr(server, kind, list(dict.fromkeys(new if name == old else name for name in names)))
            server.save(using=using)
            carried.append(server)
        return carried

    def touches(self) -> Touches:
        """A change of a server changes every list of its endpoint, and only its own: under its
        slug before the save (``Remembered``) and after."""
        stored = self.stored()
        return Touches(slugs=frozenset({self.slug} | ({stored["slug"]} if stored else set())))
