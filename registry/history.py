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

from django.db import models, router, transaction
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


@receiver(pre_create_historical_record)
def link_changeset(
    sender: Any, instance: Any, history_instance: Any, using: str | None = None, **kwargs: Any
) -> None:
    if not isinstance(history_instance, HistoryLink):
        return  # another app's history
    history_instance.changeset_id = changes.changeset_id(instance.mcp_kind, using)
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
