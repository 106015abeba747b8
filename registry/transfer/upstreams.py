"""The ``upstreams`` section of a registry document (issue 40 item 5): each upstream's
configuration, without secrets, and the overrides of the rows mirrored from it.

    {"upstreams": [{"name": "vendor", "prefix": "vnd", "url": "https://…", "transport": "auto",
                    "auth": "header", "auth_header": "Authorization",
                    "auth_secret_env": "MCP_TOOL_SECRET_VENDOR", …, "enabled": true,
                    "overrides": {"tools": {"search": {"description": "…", "tags": ["vendor"]}}}}]}

- The upstream's model fields as the other sections hold theirs; environment variable NAMES are
  kept (they are no secret: the database holds no secret to export). Health, last sync, latency,
  serverInfo and a pending review are the sync's, not exported.
- Rows mirrored from an upstream are not items of ``tools`` (etc.): the sync makes them. Their
  overrides are: ``overrides[kind][original name, URI or URI template] = {field: value}`` for the
  fields in ``upstream_overrides`` (``validation/upstreams.OVERRIDABLE``).
- Import upserts on ``name`` (``replace`` deletes the upstreams the document does not name, with
  their mirrored rows, when the document has the section); overrides are applied to the mirrored
  rows that exist and recorded as overrides; those whose row is not mirrored yet (an upstream just
  created: sync it first) are reported as ``unmatched`` and applied by importing again after the
  sync.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.core.exceptions import ValidationError
from django.db import models

from ..models import Prompt, Resource, ResourceTemplate, Tool, Upstream
from ..validation.upstreams import OVERRIDABLE
from ..validation.validators import json_pointer

SECTION = "upstreams"
KINDS: dict[str, type[models.Model]] = {"tools": Tool, "resources": Resource,
                                        "resource_templates": ResourceTemplate, "prompts": Prompt}
# The sync's, not the operator's: never in a document.
NOT_EXPORTED = {"id", "version", "created_at", "updated_at", "health", "health_detail", "last_sync_at",
                "last_sync_ok_at", "latency_ms", "server_info", "pending_sync"}
Report = Callable[[str, str], None]  # (JSON pointer, message)


def overridable(model: type[models.Model]) -> list[str]:
    """The ``OVERRIDABLE`` fields ``model`` has (a prompt has no annotations)."""
    names = {f.name for f in model._meta.concrete_fields}
    return [name for name in OVERRIDABLE if name in names]


def fields() -> list[str]:
    return [f.name for f in Upstream._meta.concrete_fields if f.name not in NOT_EXPORTED]


def overrides_of(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """``{original name: {field: value}}`` of mirrored rows' states (only their overridden fields)."""
    return {row["upstream_name"]: {name: row[name] for name in row["upstream_overrides"]
                                   if name in OVERRIDABLE and name in row}
            for row in rows if row.get("upstream_overrides")}


def item(upstream: dict[str, Any], mirrored: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    found = {kind: overrides_of(rows) for kind, rows in mirrored.items()}
    return {**{name: upstream[name] for name in fields()},
            "overrides": {kind: value for kind, value in found.items() if value}}


def export_upstreams() -> list[dict[str, Any]]:
    """Every upstream by name, in a constant number of queries (one per kind)."""
    by_upstream: dict[int, dict[str, list[dict[str, Any]]]] = {}
    for kind, model in KINDS.items():
        wanted = ["upstream_id", "upstream_name", "upstream_overrides", *overridable(model)]
        mirrored = model._default_manager.filter(upstream__isnull=False).exclude(upstream_overrides=[])
        for row in mirrored.values(*wanted):
            by_upstream.setdefault(row["upstream_id"], {}).setdefault(kind, []).append(row)
    return [item({name: getattr(row, name) for name in fields()}, by_upstream.get(row.pk, {}))
            for row in Upstream.objects.order_by("name")]


def from_history(states: dict[int, dict[str, Any]],
                 mirrored: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """The section as a change set left it: upstream states by id, mirrored row states by kind
    (each with its ``upstream`` id)."""
    grouped: dict[int, dict[str, list[dict[str, Any]]]] = {}
    for kind, rows in mirrored.items():
        for row in rows:
            grouped.setdefault(row["upstream"], {}).setdefault(kind, []).append(row)
    return sorted((item(state, grouped.get(pk, {})) for pk, state in states.items()), key=lambda i: i["name"])


@dataclass
class Planned:
    row: Upstream
    changed: bool
    overrides: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)


def plan(items: Any, report: Report) -> list[Planned]:
    """Build and ``full_clean`` every upstream of the section; problems reported with their paths."""
    if not isinstance(items, list):
        report(json_pointer([SECTION]), "A section must be a JSON list.")
        return []
    existing = {row.name: row for row in Upstream.objects.all()}
    allowed = {*fields(), "overrides"}
    planned, seen = [], set()
    for index, raw in enumerate(items):
        where: list[Any] = [SECTION, index]
        if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
            report(json_pointer(where), "Each item must be an object with a 'name'.")
            continue
        for name in sorted(set(raw) - allowed):
            hint = " (the sync's, never imported)" if name in NOT_EXPORTED else ""
            report(json_pointer([*where, name]), f"Unknown field {name!r}{hint}.")
        if raw["name"] in seen:
            report(json_pointer([*where, "name"]), f"{raw['name']!r} appears twice.")
        seen.add(raw["name"])
        row = existing.get(raw["name"]) or Upstream()
        before = {name: getattr(row, name) for name in fields()} if row.pk else None
        for name in set(raw) & set(fields()):
            setattr(row, name, raw[name])
        try:
            row.full_clean()
        except ValidationError as exc:
            for name, messages in exc.message_dict.items():
                path = where if name == "__all__" else [*where, name]
                for message in messages:
                    report(json_pointer(path), message)
            continue
        overrides = _overrides(raw.get("overrides", {}), [*where, "overrides"], report)
        after = {name: getattr(row, name) for name in fields()}
        planned.append(Planned(row, before != after, overrides))
    return planned


def _overrides(value: Any, where: list[Any], report: Report) -> dict[str, dict[str, dict[str, Any]]]:
    if not isinstance(value, dict):
        report(json_pointer(where), "An object of kinds (tools, resources, resource_templates, prompts).")
        return {}
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for kind, names in value.items():
        if kind not in KINDS or not isinstance(names, dict):
            report(json_pointer([*where, kind]), f"{kind!r}: one of {', '.join(KINDS)}, each an object of "
                   "original names.")
            continue
        allowed = overridable(KINDS[kind])
        for original, values in names.items():
            unknown = (sorted(set(values) - set(allowed)) if isinstance(values, dict)
                       else ["(not an object)"])
            if unknown:
                report(json_pointer([*where, kind, original]), f"Only {', '.join(allowed)} may be "
                       f"overridden, not {', '.join(unknown)}.")
                continue
            out.setdefault(kind, {})[original] = values
    return out


def apply(planned: list[Planned], mode: str, present: bool, report: Report) -> dict[str, Any]:
    """Write the planned upstreams and their overrides (inside the import's transaction)."""
    outcome: dict[str, Any] = {"created": [], "updated": [], "deleted": [], "unchanged": 0, "unmatched": []}
    if mode == "replace" and present:
        for row in Upstream.objects.exclude(name__in=[p.row.name for p in planned]):
            outcome["deleted"].append(row.name)
            row.delete()  # with its mirrored rows (Upstream.delete)
    for entry in planned:
        if entry.changed:
            outcome["created" if entry.row.pk is None else "updated"].append(entry.row.name)
            entry.row.save()
        for kind, names in entry.overrides.items():
            for original, values in names.items():
                _override(entry, kind, original, values, outcome, report)
    outcome["unchanged"] = len(planned) - len(outcome["created"]) - len(outcome["updated"])
    return outcome


def _override(entry: Planned, kind: str, original: str, values: dict[str, Any], outcome: dict[str, Any],
              report: Report) -> None:
    model = KINDS[kind]
    row = model._default_manager.filter(upstream=entry.row, upstream_name=original).first()
    if row is None:
        outcome["unmatched"].append(f"{entry.row.name}/{kind}/{original}")
        return
    changed = [name for name, value in values.items() if getattr(row, name) != value]
    recorded = sorted(set(row.upstream_overrides or []) | set(values))
    if not changed and recorded == sorted(row.upstream_overrides or []):
        return
    for name in changed:
        setattr(row, name, values[name])
    row.upstream_overrides = recorded
    try:
        row.full_clean()
    except ValidationError as exc:
        report(json_pointer([SECTION, entry.row.name, "overrides", kind, original]),
               "; ".join(exc.messages))
        return
    row.save()
    if entry.row.name not in outcome["updated"] and entry.row.name not in outcome["created"]:
        outcome["updated"].append(entry.row.name)
