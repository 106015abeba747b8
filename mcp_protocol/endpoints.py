"""Virtual servers: one deployment, many MCP endpoints (``/mcp/<slug>``), each its own server to
a client.

An ``EndpointSpec`` is what a provider says about one endpoint, as part of its ``Snapshot``
(``Snapshot.endpoints``): the server it is to a client (``serverInfo`` name, title, version,
icons, website; ``instructions``), what it serves (``Selection``: explicit names plus tags to
include and exclude) and who may use it (``EndpointAccess``). The catch-all endpoint (``/mcp``
unless a setting names a default slug) has no spec: it serves the whole snapshot, as before.

A caller's view on an endpoint is the endpoint's selection intersected with the caller's grant
(``auth/scopes.py``): ``select`` filters the snapshot first, cached per (snapshot, selection), and
the grant filters that (``endpoint_views.select``). Both filters keep the snapshot's order, so
listings stay deterministic.

Nothing here does I/O, and nothing here knows the registry or Django: the registry builds the
specs from its ``VirtualServer`` rows when it builds a snapshot.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

# A slug is one path segment a client types into a URL (``/mcp/<slug>``): lower-case letters,
# digits, ``-`` and ``_``, starting with a letter or digit, at most 64 characters.
SLUG = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
# Names an endpoint may not take: paths the site routes beside ``/mcp/<slug>``, and ``off``, the
# value of MCP["DEFAULT_SERVER"] that turns ``/mcp`` off (transports/endpoints.py).
RESERVED_SLUGS = frozenset(
    {"server-card", "sse", "messages", "well-known", "api", "admin", "static", "off"}
)

# MCP["DEFAULT_SERVER"]'s value that turns ``/mcp`` off (transports/endpoints.py): never a slug.
OFF = "off"

# ASGI scope key: the ``EndpointSpec`` a request was routed to (``None``: the catch-all ``/mcp``).
# The router sets it before the endpoint resolves the caller, so auth can ask which endpoint.
SCOPE_KEY = "mcp.endpoint"

AUTH_MODES = ("open", "keys", "oauth")

# The endpoint key of ``/mcp`` when it serves the whole snapshot (no setting names a default
# slug): what ``Session.endpoint`` holds for its sessions and a change message names it by.
CATCH_ALL = ""

# Bus ``changes`` messages (fanout/listener.py) may carry ``"endpoints"``: the keys (slugs, and
# ``CATCH_ALL``) of the endpoints whose view the change may alter. Only their streams hear of it.
# A message without it (a publisher that does not know, a lost bus, a grant) reaches every endpoint.
MESSAGE_KEY = "endpoints"


def reaches(message: Mapping[str, Any], endpoint: str) -> bool:
    """Does the change ``message`` concern the streams of endpoint ``endpoint``?"""
    named = message.get(MESSAGE_KEY)
    return not isinstance(named, list) or endpoint in named


def valid_slug(slug: str) -> bool:
    return bool(SLUG.match(slug)) and slug not in RESERVED_SLUGS


@dataclass(frozen=True, slots=True)
class Selection:
    """What an endpoint serves: the definitions named here, plus those carrying an included tag,
    minus those carrying an excluded tag (an excluded tag wins over a name and an included tag).

    Names per kind: tool names, resource URIs, resource template texts (``uri_template``), prompt
    names, skill root URIs (``skill://<path>``)."""

    tools: frozenset[str] = frozenset()
    resources: frozenset[str] = frozenset()
    resource_templates: frozenset[str] = frozenset()
    prompts: frozenset[str] = frozenset()
    skills: frozenset[str] = frozenset()
    include_tags: frozenset[str] = frozenset()
    exclude_tags: frozenset[str] = frozenset()
    digest: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        if not self.digest:
            parts = [sorted(getattr(self, name)) for name in (*KINDS, "include_tags", "exclude_tags")]
            text = repr(parts)
            object.__setattr__(self, "digest", hashlib.sha256(text.encode()).hexdigest()[:16])

    @classmethod
    def of(cls, **kinds: Iterable[str]) -> Selection:
        named: dict[str, Any] = {name: frozenset(values) for name, values in kinds.items()}
        return cls(**named)

    def allows(self, kind: str, name: str, tags: Iterable[str] = ()) -> bool:
        """Does the endpoint serve the definition ``name`` of ``kind`` (one of ``KINDS``)?"""
        tags = tuple(tags)
        if self.exclude_tags and not self.exclude_tags.isdisjoint(tags):
            return False
        names: frozenset[str] = getattr(self, kind)
        return name in names or (bool(self.include_tags) and not self.include_tags.isdisjoint(tags))


KINDS = ("tools", "resources", "resource_templates", "prompts", "skills")


@dataclass(frozen=True, slots=True)
class EndpointAccess:
    """Who may use an endpoint. ``modes``: the auth modes it accepts, among ``AUTH_MODES``
    (empty: whatever the deployment's ``MCP_AUTH`` accepts); ``open`` lets callers in without a
    credential. ``keys``: the public prefixes of the API keys that may use it (``mcp_<prefix>_…``,
    as the admin shows them; None: every key). ``scopes``: an OAuth token needs one of these
    scopes (None: any token the deployment accepts). ``rate``: a per-principal rate for this
    endpoint (``"N/S"``), or None."""

    modes: frozenset[str] = frozenset()
    keys: frozenset[str] | None = None
    scopes: frozenset[str] | None = None
    rate: str | None = None


# Tool search (issue 41, ``methods/tool_search.py``): how an endpoint lists its tools. ``off``: every
# tool in tools/list; ``on``: only the meta-tools and the pinned tools, the rest found by searching;
# ``auto``: on when the caller's view holds more than ``threshold`` tools.
SEARCH_MODES = ("off", "on", "auto")
# A pinned tool's ``_meta`` key (true: always listed, search mode or not), the name the Anthropic
# clients read for tools they must not defer.
PIN = "anthropic/alwaysLoad"
SEARCH_TOOL_NAME, CALL_TOOL_NAME = "search_tools", "call_tool"
DEFAULT_SEARCH_THRESHOLD = 50


@dataclass(frozen=True, slots=True)
class ToolSearch:
    """An endpoint's tool search mode and the names of its two meta-tools."""

    mode: str = "off"
    threshold: int = DEFAULT_SEARCH_THRESHOLD
    search_tool: str = SEARCH_TOOL_NAME
    call_tool: str = CALL_TOOL_NAME

    def applies(self, tools_in_view: int) -> bool:
        """Is search mode on for a caller who may see ``tools_in_view`` tools?"""
        return self.mode == "on" or (self.mode == "auto" and tools_in_view > self.threshold)

    def counted_as(self, params: Mapping[str, Any]) -> tuple[object, bool]:
        """The tool a ``tools/call`` with ``params`` is counted under in the metrics, and whether
        that is a meta-tool: a ``call_tool`` call counts as the tool it wraps (the core unwraps it
        the same way, ``methods/tool_search.unwrap``), ``search_tools`` as itself."""
        name = params.get("name")
        if self.mode == "off" or name not in (self.search_tool, self.call_tool):
            return name, False
        wrapped = params.get("arguments")
        if name == self.call_tool and isinstance(wrapped, Mapping) and isinstance(wrapped.get("name"), str):
            return wrapped["name"], False
        return name, True


@dataclass(frozen=True, slots=True)
class EndpointSpec:
    slug: str
    name: str
    version: str = "1.0.0"
    title: str | None = None
    instructions: str | None = None
    icons: tuple[dict[str, Any], ...] | None = None
    website_url: str | None = None
    description: str | None = None
    selection: Selection = Selection()
    access: EndpointAccess = EndpointAccess()
    tool_search: ToolSearch = ToolSearch()
    # Served at ``/mcp`` itself (``MCP['DEFAULT_SERVER']`` names it): its resource URL (a token's
    # audience, RFC 8707) is then ``/mcp``'s, the URL its clients connect to. Set on the scope's
    # copy only (``transports/endpoints.route``); not part of what the server is.
    at_root: bool = field(default=False, compare=False)

    @property
    def route(self) -> str:
        """The endpoint's path below the site root."""
        return f"/mcp/{self.slug}"
