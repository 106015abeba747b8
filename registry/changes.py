"""Publishing committed registry changes on the bus, once per kind per transaction.

``note_change(kind, uris)`` is called for every changed row (by ``signals.py``, by
``ChangeQuerySet`` for bulk writes, and for every kind after ``migrate``). Inside a transaction
each change is its own ``on_commit`` entry that adds it to the transaction's batch, and one flush
entry, kept last, publishes the batch: a transaction that rolls back publishes nothing, a
savepoint that rolls back (an inner ``atomic()``) drops only its own changes, and a transaction
that touches fifty tools publishes one ``tools`` message. Outside a transaction the change is
published at once. The message is ``{"id", "kind", "uris"}`` on ``bus.base.CHANGES``; every worker
(including this one) rebuilds its snapshot when it receives it, and ``uris`` are the resources
whose subscribers get ``notifications/resources/updated``.

``ChangeQuerySet`` (the models' manager) does the same for queryset bulk writes, which send no
per-row signals. In-process ``RegistryProvider`` instances are also marked stale right away, so
synchronous callers (the admin's try-it) see the change without waiting for the bus.
"""

from __future__ import annotations

import logging
import time
import uuid
import weakref
from collections.abc import Iterable
from functools import partial
from typing import Any, Protocol

from django.db import models, transaction

from mcp_protocol import tracing
from mcp_protocol.fanout.notifications import KINDS

logger = logging.getLogger(__name__)


class Stale(Protocol):
    def mark_stale(self) -> None: ...


_providers: weakref.WeakSet[Any] = weakref.WeakSet()


def track(provider: Stale) -> None:
    """Register an in-process provider to be marked stale on every committed change."""
    _providers.add(provider)


class _Batch:
    """The changes of one transaction on one connection, published together by ``flush``."""

    def __init__(self) -> None:
        self.kinds: dict[str, set[str]] = {}

    def add(self, kind: str, uris: Iterable[str]) -> None:
        self.kinds.setdefault(kind, set()).update(uris)

    def flush(self) -> None:
        if self.kinds:  # every change may have been in savepoints that rolled back
            publish(self.kinds)


_BATCH_ATTR = "_mcp_registry_batch"


def note_change(kind: str, uris: Iterable[str] = (), using: str | None = None) -> None:
    if kind not in KINDS:
        raise ValueError(f"Unknown change kind {kind!r}")
    connection = transaction.get_connection(using)
    if not connection.in_atomic_block:
        publish({kind: set(uris)})
        return
    batch: _Batch | None = getattr(connection, _BATCH_ATTR, None)
    flush_entry = _queued_flush(connection.run_on_commit, batch)
    if batch is None or flush_entry is None:
        # No flush queued: this is the transaction's first change, or the previous transaction
        # rolled back as a whole (which discards every on_commit entry, ours included).
        batch = _Batch()
        setattr(connection, _BATCH_ATTR, batch)
    else:
        connection.run_on_commit.remove(flush_entry)
    # The change itself is an ordinary on_commit entry, tagged with the open savepoints, so rolling
    # back one of them drops it (Django's savepoint_rollback filters run_on_commit by savepoint id).
    transaction.on_commit(partial(batch.add, kind, frozenset(uris)), using=using)
    # The flush goes (back) to the end, after every add, tagged with no savepoint: a savepoint
    # rollback cannot drop it, only a rollback of the whole transaction can. Django 5.2 entries
    # are (savepoint ids, callable, robust).
    connection.run_on_commit.append((set(), batch.flush, False))


def _queued_flush(entries: list[Any], batch: _Batch | None) -> Any:
    if batch is None:
        return None
    return next((entry for entry in entries if entry[1] == batch.flush), None)


def publish(kinds: dict[str, set[str]]) -> None:
    """Tell this process's providers, then every worker through the bus. Never raises: the data is
    committed already, and a bus outage must not turn a successful save into an error page."""
    for provider in list(_providers):
        provider.mark_stale()
    from mcp_django.conf import mcp_settings
    from mcp_protocol.bus.base import CHANGES

    for kind in KINDS:
        if kind not in kinds:
            continue
        # "at" (wall clock) lets every worker measure the bus delivery lag (/metrics).
        message = {"id": uuid.uuid4().hex, "kind": kind, "uris": sorted(kinds[kind]), "at": time.time()}
        # With tracing on, the publish is a PRODUCER span whose context travels in the message, so
        # each worker's fan-out of it (fanout/listener.py) is its child: one trace per change.
        with tracing.producer(f"publish registry change {kind}", {"mcp.change.id": message["id"]}):
            carried = tracing.carrier()
            if carried:
                message["trace"] = carried
            try:
                mcp_settings.backend("BUS").publish_sync(CHANGES, message)
            except Exception:
                logger.exception("Could not publish registry change %s on the bus", message)


class ChangeQuerySet(models.QuerySet):
    """Publishes queryset bulk writes, which bypass post_save/post_delete."""

    def _note(self, uris: list[str] | None = None) -> None:
        note_change(self.model.mcp_kind, uris or [], using=self.db)

    def _uris(self) -> list[str]:
        return list(self.values_list("uri", flat=True)) if hasattr(self.model, "uri") else []

    def update(self, **kwargs: Any) -> int:
        uris = self._uris()
        if any(f.name == "version" for f in self.model._meta.concrete_fields) and "version" not in kwargs:
            kwargs["version"] = models.F("version") + 1  # the row changed: so does its ETag
        count = super().update(**kwargs)
        if count:
            self._note(uris + self._uris() if "uri" in kwargs else uris)
        return count

    def bulk_create(self, objs: Any, *args: Any, **kwargs: Any) -> Any:
        created = super().bulk_create(objs, *args, **kwargs)
        if created:
            self._note([o.uri for o in created] if hasattr(self.model, "uri") else None)
        return created

    def bulk_update(self, objs: Any, fields: Any, *args: Any, **kwargs: Any) -> Any:
        objs = list(objs)
        count = super().bulk_update(objs, fields, *args, **kwargs)
        if objs:
            self._note([o.uri for o in objs] if hasattr(self.model, "uri") else None)
        return count
