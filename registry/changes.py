"""Publishing committed registry changes on the bus, once per kind per transaction.

``note_change(kind, uris)`` is called for every changed row (by ``signals.py``, and by
``ChangeQuerySet`` for bulk writes). Inside a transaction the changes are gathered and published
by one ``on_commit`` callback, so a transaction that rolls back publishes nothing and one that
touches fifty tools publishes one ``tools`` message. Outside a transaction Django runs the
callback at once. The message is ``{"id", "kind", "uris"}`` on ``bus.base.CHANGES``; every worker
(including this one) rebuilds its snapshot when it receives it, and ``uris`` are the resources
whose subscribers get ``notifications/resources/updated``.

``ChangeQuerySet`` (the models' manager) does the same for queryset bulk writes, which send no
per-row signals. In-process ``RegistryProvider`` instances are also marked stale right away, so
synchronous callers (the admin's try-it) see the change without waiting for the bus.
"""

from __future__ import annotations

import logging
import uuid
import weakref
from collections.abc import Iterable
from typing import Any, Protocol

from django.db import models, transaction

logger = logging.getLogger(__name__)

KINDS = ("tools", "resources", "prompts")


class Stale(Protocol):
    def mark_stale(self) -> None: ...


_providers: weakref.WeakSet[Any] = weakref.WeakSet()


def track(provider: Stale) -> None:
    """Register an in-process provider to be marked stale on every committed change."""
    _providers.add(provider)


class _Batch:
    def __init__(self) -> None:
        self.kinds: dict[str, set[str]] = {}

    def add(self, kind: str, uris: Iterable[str]) -> None:
        self.kinds.setdefault(kind, set()).update(uris)

    def flush(self) -> None:
        publish(self.kinds)


def note_change(kind: str, uris: Iterable[str] = (), using: str | None = None) -> None:
    if kind not in KINDS:
        raise ValueError(f"Unknown change kind {kind!r}")
    connection = transaction.get_connection(using)
    if not connection.in_atomic_block:
        publish({kind: set(uris)})
        return
    batch: _Batch | None = getattr(connection, "_mcp_registry_batch", None)
    # A rolled-back transaction discards its on_commit callbacks (and with it our batch): start a
    # new batch unless ours is still queued.
    if batch is None or not any(entry[1] == batch.flush for entry in connection.run_on_commit):
        batch = _Batch()
        connection._mcp_registry_batch = batch
        transaction.on_commit(batch.flush, using=using)
    batch.add(kind, uris)


def publish(kinds: dict[str, set[str]]) -> None:
    """Tell this process's providers, then every worker through the bus. Never raises: the data is
    committed already, and a bus outage must not turn a successful save into an error page."""
    for provider in list(_providers):
        provider.mark_stale()
    from mcp_protocol.bus.base import CHANGES
    from mcp_protocol.conf import mcp_settings

    for kind in KINDS:
        if kind not in kinds:
            continue
        message = {"id": uuid.uuid4().hex, "kind": kind, "uris": sorted(kinds[kind])}
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
