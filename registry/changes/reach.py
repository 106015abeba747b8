"""Which endpoints a registry change reaches (issue 39: fan-out per virtual server).

A bus ``changes`` message names the endpoints whose view it may alter (``mcp_protocol.endpoints``
``MESSAGE_KEY``), so only their streams hear of it. What a changed row says (its ``touches()``):

- a definition (tool, resource, template, prompt, skill): the ``State`` in which a selection sees
  it (its kind, name or URI, tags) before the save and after. The message names every enabled
  server whose selection allows either state — a rename or a retag that takes it out of a server
  reaches the server it left — and ``CATCH_ALL`` (``/mcp`` serves everything);
- a virtual server: its own slug, before the save and after (``kind: "servers"``: every list of
  that endpoint, and of no other);
- ``None``: it cannot say (a queryset update with an expression, ``migrate``): the message names
  no endpoints, and reaches every one.

The servers' selections are read once per transaction, when its batch is published (after the
commit: the servers as they are now), and only when some definition changed.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from django.apps import apps

from mcp_protocol.endpoints import CATCH_ALL, Selection
from mcp_protocol.endpoints import KINDS as SELECTION_FIELDS
from mcp_protocol.fanout.notifications import KINDS

logger = logging.getLogger(__name__)



class State(NamedTuple):
    """A definition as a selection sees it (``Selection.allows``)."""

    kind: str  # a Selection kind: tools, resources, resource_templates, prompts, skills
    name: str  # its name, URI, template text or skill root URI
    tags: frozenset[str] | None  # None: not known (a skill enclosing the one that changed)


@dataclass(frozen=True, slots=True)
class Touches:
    """What one changed row reaches: definitions' states, servers named by slug, and parents
    (a prompt's argument whose prompt is not loaded: ``(model label, pk)``, read when the batch is
    published, and only if any server is enabled)."""

    states: frozenset[State] = frozenset()
    slugs: frozenset[str] = frozenset()
    parents: frozenset[tuple[str, Any]] = frozenset()


@dataclass(slots=True)
class Reach:
    """What the changes of one kind in one transaction reach, gathered row by row."""

    states: set[State] = field(default_factory=set)
    slugs: set[str] = field(default_factory=set)
    parents: set[tuple[str, Any]] = field(default_factory=set)
    everywhere: bool = False

    def add(self, touches: Touches | None) -> None:
        if touches is None:
            self.everywhere = True
        else:
            self.states.update(touches.states)
            self.slugs.update(touches.slugs)
            self.parents.update(touches.parents)

    def resolve_parents(self, using: str | None) -> None:
        """The parents' states, read now (one query per parent model). A parent deleted in the
        same transaction is gone: its own delete said what it reached."""
        by_model: dict[str, set[Any]] = {}
        for label, pk in self.parents:
            by_model.setdefault(label, set()).add(pk)
        for label, pks in by_model.items():
            for parent in apps.get_model(label)._base_manager.using(using).filter(pk__in=pks):
                self.add(parent.touches())
        self.parents.clear()


Selections = Sequence[tuple[str, Selection]]  # (slug, selection) of every enabled server


def allows(selection: Selection, state: State) -> bool:
    if state.tags is not None:
        return selection.allows(state.kind, state.name, state.tags)
    # Tags not known: the name alone, or any included tag may have brought it in.
    return state.name in getattr(selection, state.kind) or bool(selection.include_tags)


def endpoints(
    kind: str, reach: Reach, selections: Callable[[], Selections], using: str | None = None
) -> list[str] | None:
    """The endpoint keys a change of ``kind`` reaches (None: every endpoint). ``selections`` is
    called only when a definition's state has to be matched."""
    if reach.everywhere:
        return None
    named = set(reach.slugs)
    if kind in KINDS:
        named.add(CATCH_ALL)  # /mcp serves every definition
    if (reach.states or reach.parents) and selections():
        if reach.parents:
            reach.resolve_parents(using)
            if reach.everywhere:
                return None
        names: dict[str, set[str]] = {}
        for state in reach.states:
            names.setdefault(state.kind, set()).add(state.name)
        for slug, selection in selections():
            if not selection.include_tags and all(
                getattr(selection, kind).isdisjoint(named_here) for kind, named_here in names.items()
            ):
                continue  # names none of them and takes none in by tag (an import: most servers)
            if any(allows(selection, state) for state in reach.states):
                named.add(slug)
    return sorted(named)


def reached(
    kinds: Mapping[str, Any], reach: Mapping[str, Reach] | None, using: str | None
) -> dict[str, list[str] | None] | None:
    """The endpoint keys each kind reaches; the servers' selections read once, if needed."""
    if reach is None:
        return None
    loaded: list[Selections] = []

    def selections() -> Selections:
        if not loaded:
            loaded.append(enabled_selections(using))
        return loaded[0]

    try:
        return {
            kind: endpoints(kind, reach[kind], selections, using) if kind in reach else None for kind in kinds
        }
    except Exception:
        # Committed already: a change that cannot say whom it reaches reaches everyone.
        logger.exception("Could not read the virtual servers a registry change reaches")
        return None


def enabled_selections(using: str | None = None) -> list[tuple[str, Selection]]:
    """Every enabled server's slug and selection: one query."""
    VirtualServer = apps.get_model("registry", "VirtualServer")
    rows = VirtualServer.objects.using(using).filter(enabled=True).only(
        "slug", *SELECTION_FIELDS, "include_tags", "exclude_tags"
    )
    return [(row.slug, row.selection()) for row in rows]




def union(each: Iterable[Touches | None]) -> Touches | None:
    reach = Reach()
    for touches in each:
        if touches is None:
            return None
        reach.add(touches)
    return Touches(frozenset(reach.states), frozenset(reach.slugs), frozenset(reach.parents))


def through_parent(row: Any, name: str) -> Touches:
    """What a child row reaches: its parent's (``name``: the foreign key), from the parent loaded
    with it, else named by its key and read once for the whole batch (a queryset delete of a
    prompt's arguments loads none of their prompts: one query each otherwise)."""
    field = row._meta.get_field(name)
    if field.is_cached(row):
        touches: Touches = getattr(row, name).touches()
        return touches
    return Touches(parents=frozenset({(field.related_model._meta.label, getattr(row, field.attname))}))


def of_rows(queryset: Any, updates: Mapping[str, Any] | None = None) -> Touches | None:
    """What the rows of ``queryset`` reach (one query), as they are and, given ``updates`` (a
    queryset ``update()``'s values), as they will be. A child row (a prompt's argument, a skill's
    file: ``reached_through`` names its parent) reaches what its parent does. None: not known."""
    model = queryset.model
    through: str = getattr(model, "reached_through", "")
    target = model._meta.get_field(through).related_model if through else model
    fields: tuple[str, ...] | None = getattr(target, "remembered", None)
    updates = updates or {}
    if fields is None or (through and through in updates):
        return None
    changed = {} if through else {name: value for name, value in updates.items() if name in fields}
    if any(hasattr(value, "resolve_expression") for value in changed.values()):
        return None  # an F() or a function: what it becomes is the database's to say
    prefix = f"{through}__" if through else ""
    values_list = queryset.values_list(*(prefix + name for name in fields))
    rows = [dict(zip(fields, row, strict=True)) for row in values_list]
    # Unsaved rows built from the values: each model says what it reaches (Definition.touches).
    return union(target(**values).touches() for row in rows for values in ((row, {**row, **changed})))


def of_objects(objs: Sequence[Any], fields: Iterable[str] = ()) -> Touches | None:
    """What ``objs`` (a bulk create or update of ``fields``) reach. A row whose name or tags are
    updated without having been read: its old state is not known (None)."""
    if not objs:
        return Touches()
    remembered = getattr(type(objs[0]), "remembered", ())
    if set(fields) & set(remembered) and any(o.stored() is None for o in objs):
        return None
    return union(o.touches() for o in objs)
