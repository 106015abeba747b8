"""Wires model saves and deletes, and ``migrate``, to ``changes.note_change`` (published after
commit).

Each model says what a change of it touches: its list (``mcp_kind``; a prompt's arguments and
messages publish their prompt's), its resource URIs (``change_uris()``: a resource whose URI
changes reports the old and the new one, remembered here before the save) and the virtual servers'
endpoints it reaches (``touches()``: ``changes/reach.py``, from the row as read and as saved).

Migrations write through historical models (``apps.get_model``), whose signals have other senders
than the live models connected below, so a data migration is invisible to them. After a
``migrate`` that applied or unapplied anything (in any app: a data migration elsewhere may write
registry rows), ``publish_after_migrate`` publishes every kind once, and every worker rebuilds its
snapshot. A ``migrate`` with nothing to do, and ``flush`` (which sends no plan), publish nothing.
"""

from __future__ import annotations

from typing import Any

from django.apps import apps
from django.db import DEFAULT_DB_ALIAS, connections, transaction
from django.db.models.signals import post_delete, post_save, pre_save
from django.dispatch import receiver

from .changes import publish as changes
from .models import ChangeSet, Resource, Skill, VirtualServer
from .models.history import Recorded
from .models.remembered import Remembered

# Every model with a history is one a change of which clients hear of: each says what it touches
# (``mcp_kind``, ``change_uris()``), so no table here has to be kept in step with the models.
MODELS = tuple(m for m in apps.get_app_config("registry").get_models() if issubclass(m, Recorded))


@receiver(pre_save, sender=Skill)
def remember_old_path(sender: type[Skill], instance: Skill, raw: bool = False, **kwargs: Any) -> None:
    if instance.pk and not raw:
        instance._old_path = sender.objects.filter(pk=instance.pk).values_list("path", flat=True).first()


@receiver(pre_save, sender=Resource)
def remember_old_uri(sender: type[Resource], instance: Resource, raw: bool = False, **kwargs: Any) -> None:
    if instance.pk and not raw:
        instance._old_uri = sender.objects.filter(pk=instance.pk).values_list("uri", flat=True).first()


def recall(sender: type[Remembered], instance: Remembered, raw: bool = False, using: str | None = None,
           **kwargs: Any) -> None:
    """A row saved without having been read: its old name and tags, read now (``remembered.py``)."""
    if not raw:
        instance.recall(using)


def _changed(sender: Any, instance: Any, using: str, **kwargs: Any) -> None:
    uris = instance.change_uris()
    instance.__dict__.pop("_old_uri", None)
    instance.__dict__.pop("_old_path", None)
    # The endpoints it reaches (changes/reach.py): as the row was, and as it is now.
    changes.note_change(sender.mcp_kind, uris, using=using, touches=instance.touches())
    if isinstance(instance, Remembered):
        renamed = getattr(instance, "renamed", None)
        found = renamed() if renamed is not None and kwargs.get("created") is False else None
        if found is not None and not kwargs.get("raw"):
            # A rename does not drop the definition from the servers that name it (issue 39).
            kind, old, new = found
            VirtualServer.carry_rename(kind, old, new, using=using)
        instance.remember()  # what the database holds now: a next save starts from here


for _model in MODELS:
    if issubclass(_model, Remembered):
        pre_save.connect(recall, sender=_model, dispatch_uid=f"registry-recall-{_model.__name__}")
    post_save.connect(_changed, sender=_model, dispatch_uid=f"registry-changed-save-{_model.__name__}")
    post_delete.connect(_changed, sender=_model, dispatch_uid=f"registry-changed-delete-{_model.__name__}")


def publish_after_migrate(
    sender: Any, plan: list[tuple[Any, bool]] | None = None, using: str = DEFAULT_DB_ALIAS, **kwargs: Any
) -> None:
    """``post_migrate`` receiver for the registry app (connected in ``RegistryConfig.ready``)."""
    if not plan:
        return
    # Written down as one change set when its table exists (not after `migrate registry zero`):
    # a worker whose bus missed the publish finds it there (reconcile.py).
    record = ChangeSet._meta.db_table in connections[using].introspection.table_names()
    with transaction.atomic(using=using):
        for kind in changes.LIST_KINDS:  # no endpoints named: every worker, every endpoint
            changes.note_change(kind, (), using=using, record=record)
