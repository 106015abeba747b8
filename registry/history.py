"""Every version of every definition: django-simple-history's historical tables, tied to change sets.

``Recorded`` is the base of each registry model (the four definitions, and a prompt's arguments
and messages, each with a history of its own): simple-history writes one historical row, the
row's full state after the change (``history_type`` ``+`` create, ``~`` update, ``-`` delete), on
every save and delete from any path (admin, API, import, a command, a shell). Each historical row
names its ``ChangeSet`` (``changes.changeset_id``: the one of its transaction, which also says who
and from where) and its user when the author is one. A save outside a transaction gets one of its
own (``Recorded.save``), so the row, its history and its change set commit together.

Why simple-history and not django-reversion (``bench/results/2026-11-26-history-libraries.md``):
one INSERT per saved row from its own ``post_save``, so every path is recorded, a shell's included,
with no block to open; reversion records only inside ``create_revision()`` and serializes the
whole followed object graph at the end of each block (1.76x a tool save against 1.23x; 2.76x
against 2.19x for a prompt saved with its five children). Change sets (our own table, which the
reconciler needs anyway) group the versions of one save, request or import as reversion's
revisions would.

Queryset bulk writes send no per-row signals: the import path creates a prompt's children with
``bulk_create_with_history`` and the same change set; ``QuerySet.update`` is not recorded
(nothing in the product uses it on definitions).
"""

from __future__ import annotations

from typing import Any

from django.db import connections, models, router, transaction
from django.db.models.expressions import RawSQL
from django.dispatch import receiver
from simple_history.models import HistoricalRecords
from simple_history.signals import pre_create_historical_record

from . import authorship, changes


class HistoryLink(models.Model):
    """What every historical row of the registry adds to simple-history's: its change set."""

    changeset = models.ForeignKey(
        "registry.ChangeSet", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )

    class Meta:
        abstract = True

    def _do_insert(
        self, manager: Any, using: str, fields: list[Any], returning_fields: Any, raw: bool
    ) -> Any:
        # The row joins its transaction's change set here, as it is inserted: if it is the
        # transaction's first change, the change set row is inserted by the same statement
        # (PostgreSQL), so history adds no round trip to a save that changes one row
        # (bench/results/2026-11-26-*-history-cost-after.md). bulk_create_recorded sets it before.
        if self.changeset_id is not None:
            return super()._do_insert(manager, using, fields, returning_fields, raw)
        inserted: list[Any] = []

        def insert_with_row(changeset: Any) -> None:
            inserted.append(_insert_with_changeset(self, changeset, using, fields, returning_fields))

        together = connections[using].vendor == "postgresql" and not raw
        kind = type(self).instance_type.mcp_kind  # type: ignore[attr-defined]
        # With the URIs the change set will name (a resource's), or signals.py's note of the
        # change would add them with an UPDATE of it: a round trip again.
        uris = self.__dict__.pop("_change_uris", ())
        self.changeset_id = changes.changeset_id(kind, using, insert_with_row if together else None, uris)
        return inserted or super()._do_insert(manager, using, fields, returning_fields, raw)


class Recorded(models.Model):
    history = HistoricalRecords(inherit=True, bases=[HistoryLink], cascade_delete_history=False)

    class Meta:
        abstract = True

    def save(self, *args: Any, **kwargs: Any) -> None:
        # savepoint=False: inside a transaction this is nothing at all; alone (a shell), it makes
        # the row, its historical row and its change set one commit, and one change set.
        using = kwargs.get("using") or router.db_for_write(type(self), instance=self)
        with transaction.atomic(using=using, savepoint=False):
            super().save(*args, **kwargs)


def _insert_with_changeset(
    row: HistoryLink, changeset: Any, using: str, fields: list[Any], returning_fields: Any
) -> tuple[Any, ...]:
    """``WITH opened AS (INSERT INTO changeset …) INSERT INTO historical… (…, changeset_id) VALUES
    (…, (SELECT id FROM opened))``: one statement; sets both rows' ids and returns what Django's
    ``_do_insert`` would (the historical row's ``returning_fields``)."""
    from django.db.models.sql import InsertQuery

    connection = connections[using]
    meta = type(changeset)._meta
    opened = InsertQuery(type(changeset))
    opened.insert_values([f for f in meta.local_concrete_fields if f is not meta.auto_field], [changeset])
    compiler = opened.get_compiler(using)
    compiler.returning_fields = [meta.pk]
    [(opened_sql, opened_params)] = compiler.as_sql()
    row.changeset_id = RawSQL("SELECT id FROM opened", ())  # type: ignore[assignment]
    query = InsertQuery(type(row))
    query.insert_values(fields, [row])
    [(sql, params)] = query.get_compiler(using).as_sql()
    qn = connection.ops.quote_name
    back = [*(qn(f.column) for f in returning_fields or ()), qn("changeset_id")]
    with connection.cursor() as cursor:
        cursor.execute(
            f"WITH opened AS ({opened_sql}) {sql} RETURNING {', '.join(back)}", (*opened_params, *params)
        )
        *values, changeset_pk = cursor.fetchone()
    changeset.pk = row.changeset_id = changeset_pk
    changeset._state.adding, changeset._state.db = False, using
    return tuple(values)


@receiver(pre_create_historical_record)
def link_author(
    sender: Any, instance: Any, history_instance: Any, using: str | None = None, **kwargs: Any
) -> None:
    if not isinstance(history_instance, HistoryLink):
        return  # another app's history
    from .signals import change_uris  # signals imports the models, which import this module

    history_instance._change_uris = change_uris(instance)
    author = authorship.current()
    if author.user_id is not None and history_instance.history_user_id is None:
        history_instance.history_user_id = author.user_id


def bulk_create_recorded(model: type[models.Model], rows: list[Any]) -> list[Any]:
    """``bulk_create`` with a historical row for each, in the transaction's change set."""
    from simple_history.utils import bulk_create_with_history

    if not rows:
        return []
    changeset = changes.changeset_id(model.mcp_kind, router.db_for_write(model))  # type: ignore[attr-defined]
    author = authorship.current()
    created = bulk_create_with_history(
        rows,
        model,
        default_user=None if author.user_id is None else _user(author.user_id),
        custom_historical_attrs={"changeset_id": changeset},
    )
    # bulk_create_with_history uses the default manager's bulk_create (ChangeQuerySet: published).
    return list(created)


def _user(pk: int) -> Any:
    from django.contrib.auth import get_user_model

    return get_user_model()(pk=pk)
