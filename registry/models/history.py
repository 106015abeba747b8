"""Every version of every definition: django-simple-history's historical tables, tied to change sets.

``Recorded`` is the base of each registry model (the four definitions, and a prompt's arguments
and messages, each with a history of its own): simple-history writes one historical row, the
row's full state after the change (``history_type`` ``+`` create, ``~`` update, ``-`` delete), on
every save and delete from any path (admin, API, import, a command, a shell). Each historical row
names its ``ChangeSet`` (``changes.changeset_id``: the one of its transaction, which also says who
and from where) and its user when the author is one. A save outside a transaction gets one of its
own (``Recorded.save``), so the row, its history and its change set commit together. The
historical row is written by ``RegistryHistory`` with one prepared INSERT, not by saving a
historical model instance; on PostgreSQL the first of a transaction in the statement that opens
its change set, each later one in its row's UPDATE, so history adds no round trip to a save.

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

from typing import Any, ClassVar

from django.conf import settings
from django.db import connections, models, router, transaction
from django.utils import timezone
from simple_history.models import HistoricalRecords

from mcp_django.compat.django import do_update_result, update_statement
from mcp_django.compat.simple_history import historical_model

from ..changes import authorship
from ..changes import publish as changes
from ..changes.reach import Touches


class HistoryLink(models.Model):
    """What every historical row of the registry adds to simple-history's: its change set."""

    changeset = models.ForeignKey(
        "registry.ChangeSet", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )

    class Meta:
        abstract = True


class RegistryHistory(HistoricalRecords):
    """simple-history's ``HistoricalRecords`` writing each historical row with one prepared INSERT.

    The library builds a historical model instance and saves it (``Model.save``: its signals, a
    compiled ``InsertQuery``, the row read back), which made a tool save 1.5x as slow with history
    on (``bench/results/2026-11-27-0038-history-cost-quiet.md``). The row it writes is fully known
    from the saved instance, so this writes the same columns directly: the statement is built once
    per historical model and database, the values go through each field's own
    ``get_db_prep_save`` as Django's insert compiler would. The row joins its transaction's change
    set; if it is the transaction's first change, the change set row is inserted by the same
    statement on PostgreSQL (``WITH opened AS (INSERT …) INSERT …``); once it is open, a row's
    version rides on the row's own UPDATE (``update_with_version``, called by
    ``Recorded._do_update``). So on PostgreSQL history adds no statement to a save.

    What differs from the library: ``pre_create_historical_record`` and
    ``post_create_historical_record`` are not sent for registry models (nothing here listens to
    them); everything else (``SIMPLE_HISTORY_ENABLED``, ``skip_history_when_saving``, the user of
    ``HistoryRequestMiddleware`` or ``_history_user``, ``_change_reason``, ``_history_date``) is
    read as the library reads it.
    """

    def create_historical_record(self, instance: Any, history_type: str, using: str | None = None) -> None:
        if instance.__dict__.pop("_history_written", False):
            return  # written with the row's UPDATE (update_with_version)
        model = type(instance)
        # As the library: the base model's database only with use_base_model_db, else the router's.
        using = using if self.use_base_model_db and using else router.db_for_write(model, instance=instance)
        _Writer.of(model, self, using).insert(instance, self._extra(instance, history_type, using))

    def update_with_version(
        self, instance: Any, base_qs: Any, using: str, pk_val: Any, values: list[Any]
    ) -> int | None:
        """The row's UPDATE and its version in one statement (PostgreSQL), once the transaction's
        change set is open: ``WITH updated AS (UPDATE … RETURNING *) INSERT INTO historical…
        SELECT … FROM updated``. Nothing is written unless the UPDATE matched (a stale version, a row
        deleted meanwhile): the statement's row count is the UPDATE's. Returns it, or None when
        this path does not apply and the save goes on as Django's (then ``post_save`` writes the
        version)."""
        connection = connections[using]
        if (
            connection.vendor != "postgresql"
            or not values
            or not getattr(settings, "SIMPLE_HISTORY_ENABLED", True)
            or hasattr(instance, "skip_history_when_saving")
            or instance._meta.select_on_save
        ):
            return None
        changeset = changes.open_changeset_id(using)
        if changeset is None:
            return None  # the first change: its version opens the change set (insert)
        if router.db_for_write(type(instance), instance=instance) != using:
            return None  # the version goes to another database: no statement spans both
        statement = update_statement(base_qs, pk_val, values, using)
        if statement is None:
            return None  # related models are updated too: not one statement
        update_sql, update_params = statement
        writer = _Writer.of(type(instance), self, using)
        extra = self._extra(instance, "~", using)
        extra["changeset_id"] = changeset
        with connection.cursor() as cursor:
            # The tracked columns come back from the UPDATE itself (the row as stored), so the
            # values are sent once, and the statement keeps under psycopg's 50 parameters of a
            # cached query conversion.
            cursor.execute(
                f"WITH updated AS ({update_sql} RETURNING *) INSERT INTO {writer.table} "
                f"({writer.columns}) SELECT {writer.from_updated(connection)} FROM updated",
                (*update_params, *writer.extra_params(extra, connection)),
            )
            updated = int(cursor.rowcount)
        if updated:
            instance._history_written = True
        return updated

    def _extra(self, instance: Any, history_type: str, using: str | None) -> dict[str, Any]:
        """simple-history's own columns of a version, read as the library reads them."""
        user = self.get_history_user(instance)
        return {
            "history_date": getattr(instance, "_history_date", timezone.now()),
            "history_type": history_type,
            "history_change_reason": self.get_change_reason_for_object(instance, history_type, using),
            "history_user_id": getattr(user, "pk", None)
            if user is not None
            else authorship.current().user_id,
        }


class _Writer:
    """The INSERT of one historical model on one database, and how to fill it from a saved row."""

    _cache: dict[tuple[type[models.Model], str], _Writer] = {}

    def __init__(self, model: type[models.Model], records: HistoricalRecords, using: str) -> None:
        self.kind: str = model.mcp_kind  # type: ignore[attr-defined]
        self.using = using  # connections are per thread: looked up on every insert, never kept
        connection = connections[using]
        history_model = historical_model(model, records.manager_name)
        meta = history_model._meta
        # The historical model copies each tracked field under its column; the rest are
        # simple-history's (history_date, _type, _user, _change_reason) and HistoryLink's changeset.
        tracked = {field.column: field for field in records.fields_included(model)}
        self.fields = [f for f in meta.local_concrete_fields if f is not meta.auto_field]
        self.sources = [tracked.get(f.column) for f in self.fields]
        qn = connection.ops.quote_name
        columns = ", ".join(qn(f.column) for f in self.fields)
        self.table = qn(meta.db_table)
        self.columns = columns
        self.changeset_at = next(i for i, f in enumerate(self.fields) if f.attname == "changeset_id")
        self._from_updated: str | None = None

    @classmethod
    def of(cls, model: type[models.Model], records: HistoricalRecords, using: str) -> _Writer:
        writer = cls._cache.get((model, using))
        if writer is None:
            writer = cls._cache[(model, using)] = cls(model, records, using)
        return writer

    def params(self, instance: models.Model, extra: dict[str, Any], connection: Any) -> list[Any]:
        """The version's values, in column order (the change set's left None)."""
        params: list[Any] = []
        for field, source in zip(self.fields, self.sources, strict=True):
            value = getattr(instance, source.attname) if source is not None else extra.get(field.attname)
            params.append(field.get_db_prep_save(value, connection))
        return params

    def from_updated(self, connection: Any) -> str:
        """The select list of ``INSERT … SELECT … FROM updated``: each tracked column of the updated
        row, and ``%s::type`` for simple-history's own and the change set (cast: PostgreSQL would
        otherwise take an untyped parameter, a NULL, for text)."""
        if self._from_updated is None:
            qn = connection.ops.quote_name
            self._from_updated = ", ".join(
                f"%s::{field.cast_db_type(connection)}" if source is None else f"updated.{qn(source.column)}"
                for field, source in zip(self.fields, self.sources, strict=True)
            )
        return self._from_updated

    def extra_params(self, extra: dict[str, Any], connection: Any) -> list[Any]:
        """The values of the untracked columns, in column order (``from_updated``'s ``%s``)."""
        return [
            field.get_db_prep_save(extra.get(field.attname), connection)
            for field, source in zip(self.fields, self.sources, strict=True)
            if source is None
        ]

    def insert(self, instance: models.Model, extra: dict[str, Any]) -> None:
        connection = connections[self.using]
        params = self.params(instance, extra, connection)
        # signals.py's note of this change names these URIs too; the change set must have them
        # from the start, or noting them would add an UPDATE of it: a round trip again.
        uris = instance.change_uris()
        opened: list[int] = []

        def insert_with_row(changeset: Any) -> None:
            opened.append(self._insert_with_changeset(changeset, params, connection))

        together = connection.vendor == "postgresql"
        changeset = changes.changeset_id(self.kind, self.using, insert_with_row if together else None, uris)
        if opened:
            return
        params[self.changeset_at] = changeset
        placeholders = ", ".join(["%s"] * len(params))
        with connection.cursor() as cursor:
            cursor.execute(f"INSERT INTO {self.table} ({self.columns}) VALUES ({placeholders})", params)

    def _insert_with_changeset(self, changeset: Any, params: list[Any], connection: Any) -> int:
        """``WITH opened AS (INSERT INTO changeset …) INSERT INTO historical… (…, changeset_id)
        VALUES (…, (SELECT id FROM opened))``: one statement; sets the change set's id."""
        opened_sql, opened_params = _changeset_insert(changeset, connection)
        values = ["%s"] * len(params)
        values[self.changeset_at] = "(SELECT id FROM opened)"
        row = [p for i, p in enumerate(params) if i != self.changeset_at]
        with connection.cursor() as cursor:
            cursor.execute(
                f"WITH opened AS ({opened_sql}) INSERT INTO {self.table} ({self.columns}) "
                f"VALUES ({', '.join(values)}) RETURNING changeset_id",
                (*opened_params, *row),
            )
            (changeset_pk,) = cursor.fetchone()
        changeset.pk = changeset_pk
        changeset._state.adding, changeset._state.db = False, self.using
        return int(changeset_pk)


def _changeset_insert(row: Any, connection: Any) -> tuple[str, list[Any]]:
    """``INSERT INTO changeset (…) VALUES (…) RETURNING id`` for an unsaved ``ChangeSet`` row."""
    meta = type(row)._meta
    fields = [f for f in meta.local_concrete_fields if f is not meta.auto_field]
    qn = connection.ops.quote_name
    params = [f.get_db_prep_save(f.pre_save(row, True), connection) for f in fields]
    sql = (
        f"INSERT INTO {qn(meta.db_table)} ({', '.join(qn(f.column) for f in fields)}) "
        f"VALUES ({', '.join(['%s'] * len(fields))}) RETURNING {qn(meta.pk.column)}"
    )
    return sql, params


_RECORDS = RegistryHistory(inherit=True, bases=[HistoryLink], cascade_delete_history=False)


class Recorded(models.Model):
    """The base of every registry model with a history. Put after ``Versioned`` in a model's
    bases, so the UPDATE it writes its version with is the version-guarded one."""

    history = _RECORDS
    # The list a change of this row touches: tools, resources or prompts (listChanged, and the
    # change set's ``kinds``); ``change_uris`` names the resources it touches.
    mcp_kind: ClassVar[str]

    class Meta:
        abstract = True

    def change_uris(self) -> list[str]:
        """The resource URIs a save or delete of this row changes (``resources/updated``, and the
        change set's ``uris``): none, unless the model's rows are resources."""
        return []

    def touches(self) -> Touches | None:
        """The endpoints a save or delete of this row reaches (``changes/reach.py``); None: every
        one. Definitions and servers say (``Definition.touches``, ``VirtualServer.touches``)."""
        return None

    def save(self, *args: Any, **kwargs: Any) -> None:
        # savepoint=False: inside a transaction this is nothing at all; alone (a shell), it makes
        # the row, its historical row and its change set one commit, and one change set.
        self.__dict__.pop("_history_written", None)  # of a save that failed after its UPDATE
        using = kwargs.get("using") or router.db_for_write(type(self), instance=self)
        with transaction.atomic(using=using, savepoint=False):
            super().save(*args, **kwargs)

    def _do_update(
        self,
        base_qs: Any,
        using: Any,
        pk_val: Any,
        values: Any,
        update_fields: Any,
        forced_update: Any,
        *rest: Any,
    ) -> Any:
        # *rest: Django 6.0's ``returning_fields``, and its result is the returned rows (``[()]``
        # per row when none are asked for) where 5.2's is a bool.
        if not (rest and rest[0]):
            updated = _RECORDS.update_with_version(self, base_qs, using, pk_val, values)
            if updated is not None:
                return do_update_result(updated, rest)
        return super()._do_update(base_qs, using, pk_val, values, update_fields, forced_update, *rest)


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
