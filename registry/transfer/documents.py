"""The whole registry as one JSON document: export, and an atomic, idempotent import.

The document is the fixtures' format (``fixtures/*.json``)::

    {"tools": [...], "resources": [...], "resource_templates": [...], "prompts": [...],
     "skills": [...], "servers": [...]}

each item holding model field values (no ids, timestamps or versions), matched by its natural key
(tool, template and prompt ``name``, resource ``uri``, virtual server ``slug``); prompts carry
``arguments`` and ``messages`` lists whose order is their position. Skills (matched by ``path``,
with their files) are ``skills/transfer.py``'s. A virtual server (issue 39) is its selection by
names, as the REST API body holds it: importing servers before or after the definitions they name
makes no difference. Upstreams (issue 40), without secrets, and the overrides of the rows
mirrored from them are ``transfer/upstreams.py``'s section; mirrored rows are not items of the
definition sections (the sync makes them) and ``replace`` never deletes them. The REST API
(``/api/v1/registry/``), the ``export_registry`` / ``import_registry`` commands and the fixture
loader all use this module.

Import, in ``merge`` mode, creates and updates the document's items and leaves other rows alone;
in ``replace`` mode the registry becomes the document: rows it does not name are deleted (a
missing section is an empty one, but for ``skills``, ``servers`` and ``upstreams``: a document
written before they existed leaves them alone). Every item is validated first, as the admin validates
(``full_clean``); any error, reported with its JSON pointer in the document, means nothing is
written. Otherwise everything is written in one transaction, so connected clients hear one
change per kind, once. Only rows that differ are saved: importing an export changes nothing and
publishes nothing. ``dry_run`` reports what would change and writes nothing.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from django.core.exceptions import NON_FIELD_ERRORS, ValidationError
from django.db import IntegrityError, models, transaction

from ..changes import authorship
from ..history import versions
from ..models import (
    Prompt,
    PromptArgument,
    PromptMessage,
    Resource,
    ResourceTemplate,
    Skill,
    Tool,
    Upstream,
    VirtualServer,
)
from ..models.concurrency import VersionConflict
from ..models.history import bulk_create_recorded
from ..skills import transfer as skill_transfer
from ..validation.upstreams import MIRROR_FIELDS
from ..validation.validators import json_pointer
from . import upstreams as upstream_transfer

SECTIONS: tuple[tuple[str, type[models.Model], str], ...] = (
    ("tools", Tool, "name"),
    ("resources", Resource, "uri"),
    ("resource_templates", ResourceTemplate, "uri_template"),
    ("prompts", Prompt, "name"),
    ("servers", VirtualServer, "slug"),
)
# Sections that ``replace`` empties only when the document has them (added after documents were
# written without them: such a document must not delete every server).
OPTIONAL = frozenset({"servers", upstream_transfer.SECTION})
CHILDREN: tuple[tuple[str, type[models.Model]], ...] = (
    ("arguments", PromptArgument),
    ("messages", PromptMessage),
)
NOT_EXPORTED = {"id", "created_at", "updated_at", "version", "prompt", "position", *MIRROR_FIELDS}
MODES = ("merge", "replace")


def fields_of(model: type[models.Model]) -> list[str]:
    return [f.name for f in model._meta.concrete_fields if f.name not in NOT_EXPORTED]


def export_document(at: int | None = None) -> dict[str, Any]:
    """Every definition, in listing order (a constant number of queries); ``at``: as change set
    ``at`` left the registry, rebuilt from the history (``history/versions.py``; a change set older than
    the history's first, migration 0009, finds nothing)."""
    if at is not None:
        return _export_at(at)
    document: dict[str, Any] = {}
    for section, model, _ in SECTIONS:
        queryset = _own(model._default_manager.all())
        if model is Prompt:
            queryset = queryset.prefetch_related(*(name for name, _ in CHILDREN))
        document[section] = [item_of(row) for row in queryset]
    document[skill_transfer.SECTION] = skill_transfer.export_skills()
    document[upstream_transfer.SECTION] = upstream_transfer.export_upstreams()
    return document


def _mirrors(model: type[models.Model]) -> bool:
    return model in upstream_transfer.KINDS.values()


def _own(queryset: models.QuerySet[Any]) -> models.QuerySet[Any]:
    """Leave out rows mirrored from an upstream: the sync makes them, an import never does."""
    return queryset.filter(upstream__isnull=True) if _mirrors(queryset.model) else queryset


def item_of(row: models.Model) -> dict[str, Any]:
    """One row as a document item (a prompt with its arguments and messages)."""
    model = type(row)
    item = {name: getattr(row, name) for name in fields_of(model)}
    for name, child in CHILDREN if model is Prompt else ():
        item[name] = [{f: getattr(c, f) for f in fields_of(child)} for c in getattr(row, name).all()]
    return item


def _export_at(changeset: int) -> dict[str, Any]:
    document: dict[str, Any] = {}
    sections: tuple[tuple[str, type[models.Model], str], ...] = (
        *SECTIONS, (skill_transfer.SECTION, Skill, "path"), (upstream_transfer.SECTION, Upstream, "name")
    )
    mirrored: dict[str, list[dict[str, Any]]] = {}
    upstream_states: dict[int, dict[str, Any]] = {}
    for section, model, key in sections:
        items = []
        ids = (
            model.history.filter(changeset_id__lte=changeset)  # type: ignore[attr-defined]
            .order_by("id")
            .values_list("id", flat=True)
            .distinct()
        )
        for object_id in ids:
            state = versions.state_at(model, object_id, changeset)
            if state is None:
                continue
            if model is Upstream:
                upstream_states[object_id] = state
                continue
            if state.get("upstream") is not None:  # mirrored: its overrides go with its upstream
                mirrored.setdefault(section, []).append(state)
                continue
            item = {name: state[name] for name in fields_of(model)}
            for children in versions.CHILDREN.get(model, ()):
                # A prompt's children in order (no position); a skill's files as the section has them.
                item[children.name] = [
                    {k: v for k, v in c.items() if k not in NOT_EXPORTED} for c in state[children.name]
                ]
            items.append(item)
        document[section] = sorted(items, key=lambda i: i[key])
    document[upstream_transfer.SECTION] = upstream_transfer.from_history(upstream_states, mirrored)
    return document


@dataclass
class Problem:
    path: str  # RFC 6901 pointer into the document
    message: str


@dataclass
class Outcome:
    mode: str
    dry_run: bool
    sections: dict[str, dict[str, Any]] = field(default_factory=dict)
    errors: list[Problem] = field(default_factory=list)

    @property
    def changed(self) -> int:
        return sum(len(s["created"]) + len(s["updated"]) + len(s["deleted"]) for s in self.sections.values())

    def as_json(self) -> dict[str, Any]:
        if self.errors:
            return {"errors": [{"path": p.path, "message": p.message} for p in self.errors]}
        return {"mode": self.mode, "dry_run": self.dry_run, "changed": self.changed, **self.sections}


class _DryRun(Exception):
    pass


@dataclass
class _Item:
    row: models.Model
    key: str
    children: dict[str, list[models.Model]] | None
    changed: bool


def import_document(document: Any, *, mode: str = "merge", dry_run: bool = False) -> Outcome:
    """Validate ``document`` whole, then (unless ``dry_run`` or any error) apply it atomically."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}")
    outcome = Outcome(mode=mode, dry_run=dry_run)
    if not isinstance(document, dict):
        outcome.errors.append(Problem("", "The document must be a JSON object of sections."))
        return outcome
    known = {s for s, _, _ in SECTIONS} | {skill_transfer.SECTION, upstream_transfer.SECTION}
    for unknown in sorted(set(document) - known):
        outcome.errors.append(Problem(json_pointer([unknown]), f"Unknown section {unknown!r}."))
    # One import is one change set, from the "import" source, by whoever runs it (authorship.py).
    importing = dataclasses.replace(authorship.current(), source="import")

    def report(path: str, message: str) -> None:
        outcome.errors.append(Problem(path, message))

    try:
        with authorship.authored(importing), transaction.atomic():
            plans = {
                section: _plan(section, model, key, document.get(section, []), outcome)
                for section, model, key in SECTIONS
            }
            skills = skill_transfer.plan_skills(
                document.get(skill_transfer.SECTION, []), skill_transfer.report_into(outcome.errors, Problem)
            )
            upstreams = upstream_transfer.plan(document.get(upstream_transfer.SECTION, []), report)
            if outcome.errors:
                raise _DryRun
            _apply(plans, mode, outcome, present=set(document))
            outcome.sections[upstream_transfer.SECTION] = upstream_transfer.apply(
                upstreams, mode, upstream_transfer.SECTION in document, report)
            if outcome.errors:  # an override its row refuses: nothing is written
                raise _DryRun
            outcome.sections[skill_transfer.SECTION] = skill_transfer.apply_skills(
                skills, mode, skill_transfer.SECTION in document
            )
            if dry_run:
                raise _DryRun  # roll back: nothing written, nothing published
    except _DryRun:
        pass
    except IntegrityError as exc:  # a constraint the per-item checks could not see (e.g. a swap)
        outcome.errors.append(Problem("", f"The database refused the document: {exc}"))
    except VersionConflict as exc:
        outcome.errors.append(Problem("", f"Another writer changed the registry meanwhile ({exc}); retry."))
    return outcome


def _plan(section: str, model: type[models.Model], key: str, items: Any, outcome: Outcome) -> list[_Item]:
    """Build and ``full_clean`` every item of one section, recording problems with their paths."""
    if not isinstance(items, list):
        outcome.errors.append(Problem(json_pointer([section]), "A section must be a JSON list."))
        return []
    existing = {getattr(r, key): r for r in model._default_manager.all()}
    mirrored = {getattr(r, key): r.upstream.name for r in model._default_manager.filter(
        upstream__isnull=False).select_related("upstream")} if _mirrors(model) else {}
    allowed = set(fields_of(model)) | ({n for n, _ in CHILDREN} if model is Prompt else set())
    plans: list[_Item] = []
    seen: set[Any] = set()
    for index, raw in enumerate(items):
        where = [section, index]
        if not isinstance(raw, dict) or not isinstance(raw.get(key), str):
            message = f"Each item must be an object with a {key!r}."
            outcome.errors.append(Problem(json_pointer(where), message))
            continue
        unknown = sorted(set(raw) - allowed)
        for name in unknown:
            outcome.errors.append(Problem(json_pointer([*where, name]), f"Unknown field {name!r}."))
        if raw[key] in seen:
            outcome.errors.append(Problem(json_pointer([*where, key]), f"{raw[key]!r} appears twice."))
        if raw[key] in mirrored:
            outcome.errors.append(Problem(json_pointer([*where, key]), (
                f"{raw[key]!r} is mirrored from the upstream {mirrored[raw[key]]!r}: its overrides go in "
                "that upstream's 'overrides', the rest is the upstream's.")))
        seen.add(raw[key])
        row = existing.get(raw[key]) or model()
        before = {name: getattr(row, name) for name in fields_of(model)} if row.pk else None
        for name in set(raw) & set(fields_of(model)):
            setattr(row, name, raw[name])
        if not _clean(row, where, outcome, exclude=None):
            continue
        children = _children(row, raw, where, outcome) if model is Prompt else None
        after = {name: getattr(row, name) for name in fields_of(model)}
        changed = before != after or (children is not None and _children_differ(row, children))
        plans.append(_Item(row, raw[key], children, changed))
    return plans


def _clean(row: models.Model, where: list[Any], outcome: Outcome, exclude: list[str] | None) -> bool:
    try:
        row.full_clean(exclude=exclude, validate_unique=exclude is None)
    except ValidationError as exc:
        for name, errors in exc.message_dict.items():
            path = where if name == NON_FIELD_ERRORS else [*where, name]
            outcome.errors.extend(Problem(json_pointer(path), message) for message in errors)
        return False
    return True


def _children(
    prompt: models.Model, raw: dict[str, Any], where: list[Any], outcome: Outcome
) -> dict[str, list[models.Model]] | None:
    """The prompt's arguments and messages as sent (``None`` for a list that was not sent)."""
    built: dict[str, list[models.Model]] = {}
    for name, model in CHILDREN:
        items = raw.get(name, [])
        if not isinstance(items, list):
            outcome.errors.append(Problem(json_pointer([*where, name]), "Must be a JSON list."))
            continue
        allowed, rows, names = set(fields_of(model)), [], set()
        for index, item in enumerate(items):
            path = [*where, name, index]
            if not isinstance(item, dict) or set(item) - allowed:
                extra = sorted(set(item) - allowed) if isinstance(item, dict) else []
                outcome.errors.append(
                    Problem(
                        json_pointer(path),
                        f"Must be an object of {sorted(allowed)}"
                        + (f"; unknown: {extra}." if extra else "."),
                    )
                )
                continue
            child = model(position=index, **item)
            if _clean(child, path, outcome, exclude=["prompt"]) and model is PromptArgument:
                if item["name"] in names:
                    outcome.errors.append(
                        Problem(json_pointer([*path, "name"]), f"Another argument is named {item['name']!r}.")
                    )
                names.add(item["name"])
            rows.append(child)
        built[name] = rows
    return built


def _children_differ(prompt: models.Model, children: dict[str, list[models.Model]]) -> bool:
    """The document carries the children's order, not their position numbers: stored rows in the
    same order are the same, whatever numbers they hold (two made at position 0 in the admin)."""
    if prompt.pk is None:
        return True
    for name, model in CHILDREN:
        fields = fields_of(model)
        stored = list(model._default_manager.filter(prompt=prompt).order_by("position", "id").values(*fields))
        wanted = [{f: getattr(c, f) for f in fields} for c in children[name]]
        if stored != wanted:
            return True
    return False


def _apply(plans: dict[str, list[_Item]], mode: str, outcome: Outcome, present: set[str]) -> None:
    for section, model, key in SECTIONS:
        items = plans[section]
        report: dict[str, Any] = {"created": [], "updated": [], "deleted": [], "unchanged": 0}
        # A dry run says what it would do field by field (a promotion reviewed before it is
        # applied); the states are read inside the transaction it rolls back.
        diffs: dict[str, list[dict[str, Any]]] | None = {} if outcome.dry_run else None
        if mode == "replace" and (section in present or section not in OPTIONAL):
            doomed = _own(model._default_manager.exclude(**{f"{key}__in": [i.key for i in items]}))
            report["deleted"] = sorted(doomed.values_list(key, flat=True))
            for row in doomed:
                if diffs is not None:
                    diffs[getattr(row, key)] = versions.diff(item_of(row), None)
                row.delete()  # one by one: post_delete publishes each resource's URI
        for item in items:
            if not item.changed:
                report["unchanged"] += 1
                continue
            before = None
            if diffs is not None and item.row.pk is not None:
                before = item_of(model._default_manager.get(pk=item.row.pk))
            report["created" if item.row.pk is None else "updated"].append(item.key)
            item.row.save()
            for name, child_model in CHILDREN if item.children is not None else ():
                child_model._default_manager.filter(prompt=item.row).delete()
                for child in item.children[name]:  # type: ignore[index]
                    child.prompt = item.row
                # With a historical row each, in the import's change set (history.py).
                bulk_create_recorded(child_model, item.children[name])  # type: ignore[index]
            if diffs is not None:
                diffs[item.key] = versions.diff(before, item_of(model._default_manager.get(pk=item.row.pk)))
        if diffs is not None:
            report["diff"] = diffs
        outcome.sections[section] = report
