"""A virtual server's selection against the registry (issue 39): which names it may hold, what it
resolves to in a snapshot, and the lists a client of each protocol revision gets from it.

- ``unknown_names``: the explicit names of a selection that no row and no definition in code
  holds, per field (the admin form and the REST API refuse them, naming the field). Names the
  stored row already holds are not checked again: deleting a tool must not make every server that
  names it unsavable (it is simply not served until it comes back).
- ``members``: what the selection resolves to in a snapshot: explicit names plus included tags,
  minus excluded tags (``mcp_protocol.endpoints.Selection``), only what is served (enabled).
- ``lists``: ``tools/list``, ``resources/list``, ``resources/templates/list`` and
  ``prompts/list`` (plus ``serverInfo`` and ``instructions``) per revision, shaped by the core's
  own wire functions (``mcp_protocol/versions.py``), before any caller's grant narrows them.

The snapshot is built from the database here (``snapshot.build_state``, a fixed handful of
queries), as the admin's "try it" builds its own: it sees the rows as saved, committed or not.
The admin and the REST API call this; the hot path never does (it reads ``Snapshot.endpoints``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from django.db.models import Model

from mcp_django.conf import mcp_settings
from mcp_protocol import versions
from mcp_protocol.definitions import Snapshot
from mcp_protocol.endpoint_views import select
from mcp_protocol.endpoints import KINDS, EndpointSpec
from mcp_protocol.methods import tool_search
from mcp_protocol.search import index_for
from mcp_protocol.skills import SCHEME as SKILL_SCHEME

from .code import definitions as code
from .models import Prompt, Resource, ResourceTemplate, Skill, Tool, VirtualServer
from .snapshot import build_state

# What each kind of an explicit list names, and where the registry keeps those names.
WHAT = {
    "tools": "tool named",
    "resources": "resource with the URI",
    "resource_templates": "resource template",
    "prompts": "prompt named",
    "skills": "skill with the root URI",
}


# The model whose view permission reads each kind's definitions (the admin and the API show a
# server's members and lists only of kinds the user may read: a server's permission is not a
# tool's, docs/security.md "Virtual servers: the admin and the REST API").
KIND_MODELS = {
    "tools": "tool",
    "resources": "resource",
    "resource_templates": "resourcetemplate",
    "prompts": "prompt",
    "skills": "skill",
}


def readable_kinds(user: Any) -> frozenset[str]:
    """The kinds whose definitions ``user`` may read: the view or change permission (change
    implies view, as in the admin)."""
    return frozenset(
        kind for kind, model in KIND_MODELS.items()
        if user.has_perm(f"registry.view_{model}") or user.has_perm(f"registry.change_{model}")
    )


def current_snapshot() -> Snapshot:
    """The registry as saved now (rows and code; enabled definitions only), built from the database."""
    return build_state().snapshot


def spec_of(row: VirtualServer) -> EndpointSpec:
    """The ``EndpointSpec`` the row describes, as the snapshot carries it."""
    return row.endpoint_spec()


# Where each kind's names live: the model, its key field, and the table of definitions in code.
KEYS: dict[str, tuple[type[Model], str, Mapping[str, Any]]] = {
    "tools": (Tool, "name", code.TOOLS),
    "resources": (Resource, "uri", code.RESOURCES),
    "resource_templates": (ResourceTemplate, "uri_template", code.TEMPLATES),
    "prompts": (Prompt, "name", code.PROMPTS),
}


def _known(kind: str, names: list[str]) -> set[str]:
    """Which of ``names`` (of ``kind``) a row or a definition in code holds."""
    if kind == "skills":  # rows only; named by root URI, stored by path
        paths = [n.removeprefix(SKILL_SCHEME) for n in names if n.startswith(SKILL_SCHEME)]
        return {SKILL_SCHEME + p for p in Skill.objects.filter(path__in=paths).values_list("path", flat=True)}
    model, key, in_code = KEYS[kind]
    rows = model._default_manager.filter(**{f"{key}__in": names}).values_list(key, flat=True)
    return set(rows) | {n for n in names if n in in_code}


def unknown_names(values: Mapping[str, Any], stored: VirtualServer | None = None) -> dict[str, str]:
    """``{field: message}`` for each explicit list in ``values`` naming what the registry does not
    hold (``values``: field name → list, as a form or a request body holds them after validation;
    fields absent are not checked). One query per kind checked."""
    errors: dict[str, str] = {}
    for kind in KINDS:
        value = values.get(kind)
        if not isinstance(value, list):
            continue
        kept = set(getattr(stored, kind, None) or ()) if stored is not None else set()
        names = [n for n in dict.fromkeys(value) if isinstance(n, str) and n not in kept]
        if not names:
            continue
        missing = [n for n in names if n not in _known(kind, names)]
        if missing:
            errors[kind] = _message(kind, missing)
    return errors


def _message(kind: str, missing: list[str]) -> str:
    more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
    shown = ", ".join(repr(n) for n in missing[:5]) + more
    hint = ""
    if kind == "skills" and any(not n.startswith(SKILL_SCHEME) for n in missing):
        hint = f" Skills are named by their root URI: {SKILL_SCHEME}<path>."
    if kind == "resource_templates":
        hint = " Templates are named by their URI template text, e.g. file:///logs/{day}."
    return f"No {WHAT[kind]} {shown} in the registry or in code.{hint}"


def members(row: VirtualServer, snapshot: Snapshot) -> dict[str, list[str]]:
    """Per kind, the names the server serves now from ``snapshot`` (before a caller's grant)."""
    view = select(snapshot, spec_of(row))
    return {
        "tools": [t.name for t in view.tools],
        "resources": [r.uri for r in view.resources],
        "resource_templates": [t.uri_template for t in view.resource_templates],
        "prompts": [p.name for p in view.prompts],
        "skills": [s.root for s in view.skills],
    }


def unserved(row: VirtualServer, served: Mapping[str, Iterable[str]]) -> dict[str, list[str]]:
    """Explicit names of the row not among ``served`` (``members``): disabled, deleted, taken by
    code, or dropped by an excluded tag."""
    out = {}
    for kind in KINDS:
        present = set(served.get(kind, ()))
        gone = [n for n in getattr(row, kind) or () if n not in present]
        if gone:
            out[kind] = gone
    return out


def lists(row: VirtualServer, snapshot: Snapshot, revision: str) -> dict[str, Any]:
    """What a client of ``revision`` gets from the server: ``serverInfo``, ``instructions`` and
    each list's items, whole (a client reads them a page at a time, in this order)."""
    spec = spec_of(row)
    view = select(snapshot, spec)
    out: dict[str, Any] = {
        "serverInfo": versions.implementation_to_wire(spec.name, spec.version, spec.title, revision),
    }
    if spec.instructions:
        out["instructions"] = spec.instructions
    # In search mode (before any grant: the selection's count decides auto), the meta-tools and
    # the pinned tools, as the core lists them (methods/tool_search.py).
    search = spec.tool_search
    tools = tool_search.listed(view, search) if search.applies(len(view.tools)) else view.tools
    out["tools/list"] = [versions.tool_to_wire(t, revision) for t in tools]
    # resources/list shows each selected skill's SKILL.md too (SEP-2640), as the core lists them.
    out["resources/list"] = [versions.resource_to_wire(r, revision) for r in view.listed_resources]
    out["resources/templates/list"] = [
        versions.template_to_wire(t, revision) for t in view.resource_templates
    ]
    out["prompts/list"] = [versions.prompt_to_wire(p, revision) for p in view.prompts]
    return out


def try_search(
    row: VirtualServer, snapshot: Snapshot, query: str, limit: int = 20
) -> list[tuple[str, float, str]]:
    """The admin's try-a-search: ``(name, score, description)`` of the best matches among the
    server's selection (no caller's grant: staff see what the server holds), best first, with the
    index the endpoint serves from (``search.index_for``)."""
    view = select(snapshot, spec_of(row))
    ranking = str(mcp_settings.TOOL_SEARCH_RANKING)
    hits = index_for(snapshot, ranking).search(query, limit, allowed=lambda name: view.tool(name) is not None)
    return [(hit.tool.name, hit.score, hit.tool.description or "") for hit in hits]


def preview(row: VirtualServer, snapshot: Snapshot) -> dict[str, dict[str, Any]]:
    """``lists`` for every supported revision, oldest first."""
    return {revision: lists(row, snapshot, revision) for revision in versions.ORDER}
