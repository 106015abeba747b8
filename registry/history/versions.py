"""Reading the history of a definition, diffing two versions, and reverting: one object to one of
its versions, or a whole change set.

A definition's *state* at a version is what an edit can set (its fields but ``id``, ``version``
and the timestamps); a prompt's includes its ``arguments`` and ``messages`` as they were at that
version's change set (each child has a history of its own: ``models/history.py``), and a skill's its
``files`` (as the registry document holds them: ``skill_transfer.file_item``). A deleted row's
state is ``None``. ``diff`` compares two states field by field, JSON values key by key (a JSON pointer
per changed leaf).

A revert is an ordinary edit made in a transaction of its own (so a change set of its own, by
whoever asked, with ``note`` saying what it reverts): the row is saved through the model (its
version bumped, its ETag changed, validated with ``full_clean``, published on commit like any
save), a deleted row is inserted again with its old id, a row created by the change set is deleted.
``revert_object`` is guarded by the version the caller saw (``If-Match``). ``revert_changeset``
undoes every definition the change set touched, restoring each to its state just before it, in
one transaction; if any of them changed since (a later change set), or a restored row no longer
validates, nothing is written and the ``Conflict`` list says which and why.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ValidationError
from django.db import IntegrityError, models, transaction

from ..changes import authorship
from ..models import (
    Prompt,
    PromptArgument,
    PromptMessage,
    Resource,
    ResourceTemplate,
    Skill,
    SkillFile,
    Tool,
    VirtualServer,
)
from ..skills.transfer import file_item, file_of

DEFINITIONS: dict[str, type[models.Model]] = {
    "tools": Tool,
    "resources": Resource,
    "resource-templates": ResourceTemplate,
    "prompts": Prompt,
    "skills": Skill,
    "servers": VirtualServer,  # issue 39: a virtual server's versions, read and reverted alike
}
NOT_STATE = {"id", "version", "created_at", "updated_at", "prompt", "skill"}

State = dict[str, Any] | None


@dataclass(frozen=True)
class Children:
    """Rows edited with their parent (a prompt's arguments, a skill's files): part of its state."""

    name: str  # the state's key: "arguments"
    model: type[models.Model]
    parent: str  # the foreign key to the parent: "prompt"

    def item(self, record: Any) -> dict[str, Any]:
        """A child's state (``record``: the row or one of its versions)."""
        if self.model is SkillFile:
            return file_item(record)  # binary content as base64: a state is JSON
        return {f.name: getattr(record, f.attname) for f in state_fields(self.model)}

    def order(self, record: Any) -> Any:
        return record.path if self.model is SkillFile else (record.position, record.id)

    def row(self, parent: Any, item: dict[str, Any]) -> Any:
        """An unsaved child of ``parent`` from its state."""
        row = file_of(item) if self.model is SkillFile else self.model(**item)
        setattr(row, self.parent, parent)
        return row


CHILDREN: dict[type[models.Model], tuple[Children, ...]] = {
    Prompt: (Children("arguments", PromptArgument, "prompt"), Children("messages", PromptMessage, "prompt")),
    Skill: (Children("files", SkillFile, "skill"),),
}


@dataclass(frozen=True)
class Conflict:
    kind: str
    id: int
    key: str  # its name or URI
    reason: str

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


class RevertRefused(Exception):
    """Nothing was written; ``conflicts`` says why."""

    def __init__(self, conflicts: list[Conflict]) -> None:
        self.conflicts = conflicts
        super().__init__("; ".join(f"{c.kind} {c.key}: {c.reason}" for c in conflicts))


class PreconditionFailed(Exception):
    """The row is not at the version the caller saw (``If-Match``)."""


def may_read(user: Any, model: type[models.Model]) -> bool:
    """Whether ``user`` may read ``model``'s rows, and so their past states and diffs: its view or
    change permission (change implies view, as in the admin). ``view_changeset`` alone is not
    enough: a version carries a skill's files, an http tool's headers."""
    name = f"{model._meta.app_label}.%s_{model._meta.model_name}"
    return bool(user.has_perm(name % "view") or user.has_perm(name % "change"))


def kind_of(model: type[models.Model]) -> str:
    return next(kind for kind, m in DEFINITIONS.items() if m is model)


def state_fields(model: type[models.Model]) -> list[models.Field]:
    return [f for f in model._meta.concrete_fields if f.name not in NOT_STATE]


def key_of(model: type[models.Model], row: Any) -> str:
    return str(
        getattr(row, "uri", None)
        or getattr(row, "uri_template", None)
        or getattr(row, "path", None)
        or getattr(row, "slug", None)
        or row.name
    )


# -- reading ----------------------------------------------------------------------------------------
def versions(model: type[models.Model], object_id: int) -> models.QuerySet[Any]:
    """Every version of one definition, newest first."""
    return model.history.filter(id=object_id).order_by("-history_id")  # type: ignore[attr-defined]


def state(record: Any) -> State:
    """A definition's state at the version ``record`` (a historical row), children included."""
    if record.history_type == "-":
        return None
    model = record.instance_type
    out = {f.name: getattr(record, f.attname) for f in state_fields(model)}
    out.update(children_at(model, record.id, record.changeset_id))
    return out


def state_at(model: type[models.Model], object_id: int, changeset: int | None = None) -> State:
    """A definition's state as change set ``changeset`` left it (None: now, from its history)."""
    records = versions(model, object_id)
    if changeset is not None:
        records = records.filter(changeset_id__lte=changeset)
    record = records.first()
    if record is None or record.history_type == "-":
        return None
    out = {f.name: getattr(record, f.attname) for f in state_fields(model)}
    out.update(children_at(model, object_id, changeset))
    return out


def children_at(model: type[models.Model], parent_id: int, changeset: int | None) -> dict[str, list[Any]]:
    """A definition's children (a prompt's arguments and messages, a skill's files) as change set
    ``changeset`` left them; none for the kinds without children."""
    out: dict[str, list[Any]] = {}
    for children in CHILDREN.get(model, ()):
        records = children.model.history.filter(**{f"{children.parent}_id": parent_id})  # type: ignore[attr-defined]
        if changeset is not None:
            records = records.filter(changeset_id__lte=changeset)
        latest: dict[int, Any] = {}
        for rec in records.order_by("history_id"):
            latest[rec.id] = rec  # the last version of each child up to that change set
        alive = [r for r in latest.values() if r.history_type != "-"]
        alive.sort(key=children.order)
        out[children.name] = [children.item(r) for r in alive]
    return out


def previous(record: Any) -> Any:
    """The version of the same row before ``record``, or None (``record`` created it)."""
    return (
        record.instance_type.history.filter(id=record.id, history_id__lt=record.history_id)
        .order_by("-history_id")
        .first()
    )


def changeset_at(when: Any) -> int | None:
    """The last change set opened at or before ``when`` (an aware datetime), or None."""
    from ..models.changesets import ChangeSet

    return ChangeSet.objects.filter(created_at__lte=when).order_by("-id").values_list("id", flat=True).first()


# -- diffing ----------------------------------------------------------------------------------------
def diff(before: State, after: State) -> list[dict[str, Any]]:
    """The changed leaves between two states: ``{"path", "before", "after"}``, ``path`` a JSON
    pointer (``/input_schema/properties/who``: JSON fields are diffed key by key)."""
    changes: list[dict[str, Any]] = []
    # A created or deleted row: every field, from or to nothing.
    _diff(
        "",
        {} if before is None and after is not None else before,
        {} if after is None and before is not None else after,
        changes,
    )
    return changes


_ABSENT: Any = None


def _diff(path: str, before: Any, after: Any, out: list[dict[str, Any]]) -> None:
    if before == after:
        return
    if isinstance(before, dict) and isinstance(after, dict):
        for key in [*before, *(k for k in after if k not in before)]:
            _diff(f"{path}/{_escape(str(key))}", before.get(key, _ABSENT), after.get(key, _ABSENT), out)
        return
    if isinstance(before, list) and isinstance(after, list):
        for i in range(max(len(before), len(after))):
            b = before[i] if i < len(before) else _ABSENT
            a = after[i] if i < len(after) else _ABSENT
            _diff(f"{path}/{i}", b, a, out)
        return
    out.append({"path": path or "/", "before": before, "after": after})


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")  # RFC 6901 §3


# -- reverting --------------------------------------------------------------------------------------
def revert_object(
    model: type[models.Model], object_id: int, history_id: int, if_match: Iterable[str] | None
) -> Any:
    """Make the row what it was at version ``history_id`` (a new version). ``if_match``: the
    versions the caller accepts (``"*"``: any existing row); None: unconditional."""
    record = versions(model, object_id).filter(history_id=history_id).first()
    if record is None:
        raise LookupError(f"{kind_of(model)} {object_id} has no version {history_id}")
    with _as_revert(f"revert of {kind_of(model)} {object_id} to version {history_id}"), transaction.atomic():
        current = model._default_manager.select_for_update().filter(pk=object_id).first()
        if if_match is not None:
            tags = set(if_match)
            if current is None or not ("*" in tags or f'"{current.version}"' in tags):
                raise PreconditionFailed(
                    f"{kind_of(model)} {object_id} is "
                    + ("deleted" if current is None else f'at version "{current.version}"')
                )
        try:
            return _apply(model, object_id, current, state(record))
        except (ValidationError, IntegrityError) as exc:
            raise RevertRefused(
                [Conflict(kind_of(model), object_id, key_of(model, record), _reason(exc))]
            ) from None


def revert_changeset(changeset: int) -> list[tuple[str, int]]:
    """Undo change set ``changeset``: every definition it touched back to its state just before,
    in one transaction; returns the (kind, id) restored. ``RevertRefused``: nothing written."""
    units = touched(changeset)
    if not units:
        raise LookupError(f"change set {changeset} changed no definition")
    conflicts: list[Conflict] = []
    with _as_revert(f"revert of change set {changeset}"), transaction.atomic():
        for model, object_id in units:
            current = model._default_manager.select_for_update().filter(pk=object_id).first()
            latest = versions(model, object_id).first()
            key = key_of(model, latest if latest is not None else current)
            # Changed since, unless it is still what the change set left (a later change may have
            # been reverted already).
            if state_at(model, object_id) != state_at(model, object_id, changeset):
                _, last = _latest(model, object_id)
                conflicts.append(
                    Conflict(kind_of(model), object_id, key, f"changed since, by change set {last}")
                )
                continue
            before = versions(model, object_id).filter(changeset_id__lt=changeset).first()
            first = versions(model, object_id).filter(changeset_id=changeset).last()
            if before is None and first is not None and first.history_type != "+":
                # It existed before its history was kept: what it was is unknown.
                conflicts.append(
                    Conflict(kind_of(model), object_id, key, "no version before this change set")
                )
                continue
            try:
                with transaction.atomic():
                    # Just before the change set: its children's versions counted for a prompt.
                    _apply(model, object_id, current, state_at(model, object_id, changeset - 1))
            except (ValidationError, IntegrityError) as exc:
                conflicts.append(Conflict(kind_of(model), object_id, key, _reason(exc)))
        if conflicts:
            raise RevertRefused(conflicts)  # rolls the whole transaction back
    return [(kind_of(m), i) for m, i in units]


def touched(changeset: int) -> list[tuple[type[models.Model], int]]:
    """The definitions a change set changed (a prompt or a skill for a change to one of its
    children)."""
    units: list[tuple[type[models.Model], int]] = []
    for model in DEFINITIONS.values():
        ids = set(model.history.filter(changeset_id=changeset).values_list("id", flat=True))  # type: ignore[attr-defined]
        for children in CHILDREN.get(model, ()):
            ids |= set(
                children.model.history.filter(changeset_id=changeset).values_list(  # type: ignore[attr-defined]
                    f"{children.parent}_id", flat=True
                )
            )
        units += [(model, i) for i in sorted(ids)]
    return units


def _latest(model: type[models.Model], object_id: int) -> tuple[Any, int | None]:
    """The newest version of a definition and the newest change set that touched it (its
    children's counted for a prompt)."""
    latest = versions(model, object_id).first()
    changeset = None if latest is None else latest.changeset_id
    for children in CHILDREN.get(model, ()):
        newer = (
            children.model.history.filter(**{f"{children.parent}_id": object_id})  # type: ignore[attr-defined]
            .order_by("-history_id")
            .first()
        )
        if newer is not None and (newer.changeset_id or 0) > (changeset or 0):
            changeset = newer.changeset_id
    return latest, changeset


def _apply(model: type[models.Model], object_id: int, current: Any, target: State) -> Any:
    if target is None:
        if current is not None:
            current.delete()
        return None
    children = CHILDREN.get(model, ())
    fields = {k: v for k, v in target.items() if k not in {c.name for c in children}}
    if current is None:  # restored: the old id, and a version above any it had
        last = versions(model, object_id).first()
        current = model(pk=object_id, **fields)
        current.version = (last.version if last is not None else 0) + 1
    else:
        for name, value in fields.items():
            setattr(current, name, value)
    current.full_clean()
    current.save()
    for child in children:
        child.model._default_manager.filter(**{child.parent: current}).delete()
        for item in target.get(child.name, []):
            row = child.row(current, item)
            row.full_clean(exclude=[child.parent])
            row.save()
    return current


def _reason(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        return (
            "; ".join(f"{field}: {' '.join(msgs)}" for field, msgs in exc.message_dict.items())
            if hasattr(exc, "error_dict")
            else " ".join(exc.messages)
        )
    return f"the database refused it: {exc}"


def _as_revert(note: str) -> Any:
    return authorship.authored(dataclasses.replace(authorship.current(), note=note))
