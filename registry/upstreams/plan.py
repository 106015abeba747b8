"""What a listing changes in the registry (``plan``) and writing it (``write``).

One mirrored row per definition, keyed on (upstream, upstream_name). Upstream-owned fields are
copied from the listing; our override columns (``OVERRIDABLE``) are written only when the operator
has not overridden them (``upstream_overrides``). Each new or changed row is validated as an
imported one is (``full_clean``: schemas, annotations, names, URIs, uniqueness against every other
row and definition in code): a definition that fails is refused with the reason, never renamed.

Missing: a kind is pruned (its unlisted rows marked ``upstream_missing``) only when ``trusted``
says so (``sync.trusted_kinds``); rows marked missing keep their bindings and come back when listed.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any

from django.core.exceptions import ValidationError
from django.db import models

from ..changes import authorship
from ..models import Prompt, Resource, ResourceTemplate, Tool
from ..models.upstreams import Upstream
from . import schemas
from .names import mirrored_name, name_problem
from .report import Refused, SyncReport

OVERRIDABLE = ("enabled", "name", "title", "description", "annotations", "tags")
MAX_DEFINITION_BYTES = 256 * 1024  # one definition's wire JSON (a hostile schema of megabytes)

MODELS: dict[str, type[models.Model]] = {
    "tools": Tool, "resources": Resource, "templates": ResourceTemplate, "prompts": Prompt,
}
KEYS = {"tools": "name", "resources": "uri", "templates": "uriTemplate", "prompts": "name"}


def author(upstream: Upstream, what: str) -> authorship.Author:
    """Who a sync's change set is by: whoever runs it (the command, the admin), else ``system``."""
    current = authorship.current()
    base = current if current is not authorship.NOBODY else authorship.Author(source="system")
    return dataclasses.replace(base, note=f"{what} of upstream {upstream.name}"[:255])


def label(kind: str, row: Any) -> str:
    """How a report names a row: its URI (resources), template, or name."""
    return str(row.uri if kind == "resources" else row.uri_template if kind == "templates" else row.name)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def desired(kind: str, prefix: str, wire: dict[str, Any]) -> dict[str, Any]:
    """The columns a definition sets (the override columns among them, ``enabled``/``tags`` aside)."""
    values: dict[str, Any] = {
        "name": mirrored_name(prefix, _text(wire.get("name"))),
        "title": _text(wire.get("title"))[:255],
        "description": _text(wire.get("description")),
    }
    if kind == "tools":
        execution = wire.get("execution")
        values.update(input_schema=wire.get("inputSchema"), output_schema=wire.get("outputSchema"),
                      annotations=wire.get("annotations"), kind=Tool.Kind.UPSTREAM,
                      # Its taskSupport says how calls reach it (Tool.upstream_task_support).
                      execution=execution if isinstance(execution, dict) else None)
    elif kind == "resources":
        size = wire.get("size")
        good_size = isinstance(size, int) and not isinstance(size, bool) and size >= 0
        values.update(uri=wire.get("uri"), mime_type=_text(wire.get("mimeType")),
                      size=size if good_size else None, annotations=wire.get("annotations"),
                      kind=Resource.Kind.UPSTREAM)
    elif kind == "templates":
        values.update(uri_template=wire.get("uriTemplate"), mime_type=_text(wire.get("mimeType")),
                      annotations=wire.get("annotations"), kind=ResourceTemplate.Kind.UPSTREAM)
    return values


def _problem(exc: ValidationError) -> str:
    if hasattr(exc, "message_dict"):
        return "; ".join(f"{k}: {' '.join(v)}" for k, v in exc.message_dict.items())
    return " ".join(exc.messages)


@dataclass
class Plan:
    report: SyncReport
    saves: list[tuple[models.Model, list[str] | None]] = field(default_factory=list)  # (row, fields)


def plan(upstream: Upstream, definitions: dict[str, list[dict[str, Any]]], trusted: set[str]) -> Plan:
    """The rows to save for ``definitions`` (synchronous ORM reads, no writes)."""
    out = Plan(SyncReport(upstream=upstream.name))
    for kind, model in MODELS.items():
        rows = {r.upstream_name: r for r in model._default_manager.filter(upstream=upstream)}  # type: ignore[attr-defined]
        seen: set[str] = set()
        for wire in definitions.get(kind, []):
            _one(out, upstream, kind, model, rows, seen, wire)
        if kind in trusted:
            for key, row in rows.items():
                if key not in seen and not row.upstream_missing:
                    row.upstream_missing = True
                    out.saves.append((row, ["upstream_missing", "updated_at"]))
                    out.report.missing.append(label(kind, row))
    return out


def _one(out: Plan, upstream: Upstream, kind: str, model: type[models.Model], rows: dict[str, Any],
         seen: set[str], wire: dict[str, Any]) -> None:
    key = wire.get(KEYS[kind])
    if not isinstance(key, str) or not key:
        out.report.refused.append(Refused(str(key)[:200], f"a {kind} definition without {KEYS[kind]}"))
        return
    if key in seen:
        out.report.refused.append(Refused(key, "listed twice by the upstream: the first is kept"))
        return
    seen.add(key)
    if len(json.dumps(wire)) > MAX_DEFINITION_BYTES:
        out.report.refused.append(Refused(key, f"its definition is over {MAX_DEFINITION_BYTES} bytes"))
        return
    problem = name_problem(upstream.prefix, _text(wire.get("name")))
    if problem:
        out.report.refused.append(Refused(key, problem))
        return
    values = desired(kind, upstream.prefix, wire)
    row = rows.get(key)
    if row is None:
        row = model(upstream=upstream, upstream_name=key, upstream_definition=wire, **values)
        changed: list[str] | None = None
    else:
        overrides = set(row.upstream_overrides or ())
        changed = [f for f, v in values.items() if f not in overrides and getattr(row, f) != v]
        for f in changed:
            setattr(row, f, values[f])
        if row.upstream_definition != wire:
            row.upstream_definition = wire
            changed.append("upstream_definition")
        restored = row.upstream_missing
        if restored:
            row.upstream_missing = False
            changed.append("upstream_missing")
        if not changed:
            return
    # Schemas in another dialect (the TypeScript SDK's draft-07): checked by schemas.py instead.
    exclude = [f for f in ("input_schema", "output_schema")
               if kind == "tools" and schemas.foreign(getattr(row, f))]
    for f in exclude:
        why = schemas.problem(getattr(row, f), f)
        if why:
            out.report.refused.append(Refused(key, why))
            return
    try:
        row.full_clean(exclude=exclude)
    except ValidationError as exc:
        out.report.refused.append(Refused(key, _problem(exc)))
        return
    out.saves.append((row, None if changed is None else [*changed, "updated_at"]))
    name = label(kind, row)
    if changed is None:
        out.report.added.append(name)
    elif "upstream_missing" in changed:
        out.report.restored.append(name)
    else:
        out.report.updated.append(name)


def write(p: Plan) -> None:
    """Save the planned rows (the caller holds the transaction: one change set)."""
    for row, fields in p.saves:
        row.save(update_fields=fields) if fields is not None else row.save()
