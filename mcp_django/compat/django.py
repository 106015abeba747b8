"""Django internals the registry relies on (Django 5.2; 6.0 noted where it differs).

- A connection's ``run_on_commit``: a list of ``(savepoint ids, callable, robust)`` entries that
  ``transaction.on_commit`` appends to and ``savepoint_rollback`` filters by savepoint id; the
  registry keeps its flush entry last and finds its markers by identity (``registry/changes/publish.py``).
- ``Model._do_update(base_qs, using, pk_val, values, update_fields, forced_update, *rest)``:
  overridden for the version guard and history (``registry/models/concurrency.py``, ``models/history.py``);
  5.2 returns a bool, 6.0 takes ``returning_fields`` and returns the rows.
- The UPDATE a save would send, built as ``QuerySet._update`` builds it (``history.py`` sends it
  inside a ``WITH``).
- ``_prefetched_objects_cache``: where ``prefetch_related`` keeps a row's related lists.
- ``BaseFormSet._should_delete_form(form)``: whether a formset's row is marked for deletion
  (``registry/admin/inline_order.py`` numbers only the rows that stay).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.db.models import sql

# One entry of ``connection.run_on_commit`` (Django 5.2: savepoint ids, callable, robust).
OnCommitEntry = tuple[set[str], Callable[[], Any], bool]


def on_commit_entries(connection: Any) -> list[OnCommitEntry]:
    """The connection's queued on-commit entries, in order (the list itself: callers edit it)."""
    entries: list[OnCommitEntry] = connection.run_on_commit
    return entries


def open_savepoints(connection: Any) -> set[str]:
    """The ids of the savepoints open now (what an ``on_commit`` entry is tagged with)."""
    return set(connection.savepoint_ids)


def queue_untagged(connection: Any, func: Callable[[], Any]) -> None:
    """Queue ``func`` on commit tagged with no savepoint: a savepoint rollback cannot drop it,
    only a rollback of the whole transaction can (``transaction.on_commit`` tags with the open
    savepoints)."""
    connection.run_on_commit.append((set(), func, False))


def do_update_result(updated: int, rest: tuple[Any, ...]) -> Any:
    """What ``Model._do_update`` returns for ``updated`` rows matched: 5.2 a bool; 6.0 (called
    with ``returning_fields`` in ``rest``) the returned rows, ``()`` per row when none are asked."""
    return [()] * updated if rest else updated > 0


def update_statement(base_qs: Any, pk_val: Any, values: list[Any], using: str) -> tuple[str, Any] | None:
    """The SQL and parameters of the UPDATE ``Model._do_update`` would send for ``values`` (the
    ``(field, model, value)`` triples it is given), or None when the save also updates related
    models (then it is not one statement)."""
    query = base_qs.filter(pk=pk_val).query.chain(sql.UpdateQuery)
    query.add_update_fields(values)
    query.annotations = {}
    if query.get_related_updates():
        return None
    statement: tuple[str, Any] = query.get_compiler(using).as_sql()
    return statement


def forget_prefetched(instance: Any) -> None:
    """Drop what ``prefetch_related`` cached on ``instance``, so its related lists are read again."""
    cache = getattr(instance, "_prefetched_objects_cache", None)
    if cache is not None:
        cache.clear()


def should_delete_form(formset: Any, form: Any) -> bool:
    """Whether ``form`` of ``formset`` is marked for deletion (its DELETE box, when deletable)."""
    return bool(formset._should_delete_form(form))
