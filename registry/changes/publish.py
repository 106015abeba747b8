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

Every change is also written down: the transaction's first change opens its ``ChangeSet`` row
(who and from where: ``authorship.py``), later ones add the lists and URIs it did not name yet, and
the bus messages carry its id and are named by its ``uid`` (message id ``cs<uid>.<kind>``; not the
id, which a fresh or restored database hands out again while Redis still holds the claims of the
old ones). A worker that never got a message finds the change set in the database and publishes
the same messages again (``reconcile.py``); the fan-out claims a change by its message id, so its
clients are notified once either way. The row is opened inside the transaction (in the savepoint
of the first change: if that savepoint rolls back, the next change opens another), so a
rolled-back transaction leaves none.
"""

from __future__ import annotations

import logging
import time
import uuid
import weakref
from collections.abc import Callable, Iterable, Mapping
from contextvars import ContextVar
from functools import partial
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from django.apps import apps
from django.db import models, transaction

from mcp_django.compat.django import on_commit_entries, open_savepoints, queue_untagged
from mcp_protocol import tracing
from mcp_protocol.endpoints import MESSAGE_KEY
from mcp_protocol.fanout.notifications import KINDS as LIST_KINDS
from mcp_protocol.fanout.notifications import SERVERS

from . import authorship
from .reach import Reach, Touches, of_objects, of_rows, reached

UPSTREAMS = "upstreams"  # an Upstream row (issue 40): workers rebuild, no endpoint is notified
# The kinds of change, in message order: the lists (the fan-out's), then the virtual servers
# (every list of the endpoints named: fanout/notifications.py), then the upstreams (none).
KINDS = (*LIST_KINDS, SERVERS, UPSTREAMS)

if TYPE_CHECKING:
    from collections.abc import Collection

logger = logging.getLogger(__name__)


class Stale(Protocol):
    def mark_stale(self) -> None: ...


_providers: weakref.WeakSet[Any] = weakref.WeakSet()


def track(provider: Stale) -> None:
    """Register an in-process provider to be marked stale on every committed change."""
    _providers.add(provider)


class Opened(NamedTuple):
    """A change set as its messages name it: its id (the reconciler's order) and its ``uid`` (the
    message ids and fan-out claims: unique across databases)."""

    id: int
    uid: str  # hex


class _Batch:
    """The changes of one transaction on one connection, published together by ``flush``, and the
    change set row they are written down in."""

    def __init__(self, using: str | None) -> None:
        self.using = using
        self.kinds: dict[str, set[str]] = {}  # filled by on_commit entries: what committed
        self.reach: dict[str, Reach] = {}  # the endpoints each kind's changes reach (reach.py)
        self.opened: Opened | None = None
        self._recorded: dict[str, set[str]] = {}  # what the change set row says
        self._opened: Any = None  # the on_commit marker queued in the savepoint that opened it
        self._opened_in: set[str] = set()  # the savepoints open then

    def add(self, kind: str, uris: Iterable[str], touches: Touches | None = None) -> None:
        self.kinds.setdefault(kind, set()).update(uris)
        self.reach.setdefault(kind, Reach()).add(touches)

    def record(
        self,
        kind: str,
        uris: frozenset[str],
        connection: Any,
        using: str | None,
        insert: Insert | None = None,
    ) -> None:
        """Write the change down in the transaction's change set (opened by its first change, with
        ``insert`` when given: see ``open_changeset``)."""
        ChangeSet = changeset_model()

        # Django drops the on_commit entries of a savepoint that rolls back: if the marker is gone,
        # so is the change set row that was inserted with it. Opened outside any savepoint (the
        # usual case), only a rollback of the whole transaction can drop it, and that drops this
        # batch too: no need to look (an import notes thousands of changes).
        if not self.is_open(connection):
            self._recorded = {kind: set(uris)}
            self.opened = open_changeset(self._recorded, using, insert)
            self._opened = partial(_opened_marker)  # a new object: entries are found by identity
            self._opened_in = open_savepoints(connection)
            transaction.on_commit(self._opened, using=using)
        elif not uris <= self._recorded.get(kind, set()) or kind not in self._recorded:
            self._recorded.setdefault(kind, set()).update(uris)
            ChangeSet.objects.using(using).filter(pk=self.changeset).update(
                kinds=_kinds(self._recorded), uris=_uris(self._recorded)
            )

    @property
    def changeset(self) -> int | None:
        return None if self.opened is None else self.opened.id

    def is_open(self, connection: Any) -> bool:
        """Whether the change set row this batch opened is still part of the transaction."""
        return self.opened is not None and (
            not self._opened_in or any(e[1] is self._opened for e in on_commit_entries(connection))
        )

    def flush(self) -> None:
        if self.kinds:  # every change may have been in savepoints that rolled back
            publish(self.kinds, self.opened, self.reach, self.using)


def _opened_marker() -> None:
    """Queued on commit only to be found (see ``_Batch.record``); does nothing."""


def _kinds(changed: dict[str, set[str]]) -> list[str]:
    return [kind for kind in KINDS if kind in changed]


def _uris(changed: dict[str, set[str]]) -> list[str]:
    return sorted(set().union(*changed.values())) if changed else []


# Inserts an unsaved ChangeSet row (together with whatever rides with it) and sets its pk.
Insert = Callable[[models.Model], None]


def changeset_model() -> type[models.Model]:
    """``registry.models.ChangeSet``, looked up in Django's app registry: the models import this
    module (their querysets and history note changes through it), so it imports none of them."""
    model: type[models.Model] = apps.get_model("registry", "ChangeSet")
    return model


def open_changeset(
    changed: dict[str, set[str]], using: str | None = None, insert: Insert | None = None
) -> Opened:
    """Insert the change set row of a change (its author from ``authorship``); returns its id and uid.
    ``insert``: a caller's own INSERT of the row (``models/history.py`` writes the transaction's first
    historical row in the same statement, saving a round trip per save)."""
    ChangeSet = changeset_model()

    author = authorship.current()
    row = ChangeSet(
        source=author.source,
        actor=author.actor,
        user_id=author.user_id,
        note=author.note,
        kinds=_kinds(changed),
        uris=_uris(changed),
    )
    if insert is None:
        row.save(force_insert=True, using=using)
    else:
        insert(row)
    return Opened(int(row.pk), row.uid.hex)


_BATCH_ATTR = "_mcp_registry_batch"


def note_change(
    kind: str,
    uris: Iterable[str] = (),
    using: str | None = None,
    *,
    record: bool = True,
    insert: Insert | None = None,
    touches: Touches | None = None,
) -> None:
    """A registry row of ``kind`` changed (``uris``: the resources it touched); ``record``: write
    it down in a change set (False only where the table may not exist: after a ``migrate``);
    ``insert``: how to insert the change set row if this change opens it (``open_changeset``);
    ``touches``: the endpoints it reaches (``reach.py``; None: every one)."""
    if kind not in KINDS:
        raise ValueError(f"Unknown change kind {kind!r}")
    uris = frozenset(uris)
    connection = transaction.get_connection(using)
    if not connection.in_atomic_block:
        changed = {kind: set(uris)}
        reach = Reach()
        reach.add(touches)
        publish(changed, open_changeset(changed, using, insert) if record else None, {kind: reach}, using)
        return
    batch: _Batch | None = getattr(connection, _BATCH_ATTR, None)
    entries = on_commit_entries(connection)
    flush_entry = _queued_flush(entries, batch)
    if batch is None or flush_entry is None:
        # No flush queued: this is the transaction's first change, or the previous transaction
        # rolled back as a whole (which discards every on_commit entry, ours included).
        batch = _Batch(using)
        setattr(connection, _BATCH_ATTR, batch)
    else:
        if entries[-1] is flush_entry:
            entries.pop()  # where it is kept: no scan of the list
        else:
            entries.remove(flush_entry)
    if record:
        batch.record(kind, uris, connection, using, insert)
    # The change itself is an ordinary on_commit entry, tagged with the open savepoints, so rolling
    # back one of them drops it (Django's savepoint_rollback filters run_on_commit by savepoint id).
    transaction.on_commit(partial(batch.add, kind, uris, touches), using=using)
    # The flush goes (back) to the end, after every add, tagged with no savepoint: a savepoint
    # rollback cannot drop it, only a rollback of the whole transaction can.
    queue_untagged(connection, batch.flush)


def changeset_id(
    kind: str, using: str | None = None, insert: Insert | None = None, uris: Iterable[str] = ()
) -> int | None:
    """The id of the change set the current transaction's changes go to, opened now (for ``kind``
    and ``uris``, with ``insert`` when given) if this is its first change; None outside a
    transaction (nothing to group with). Reaches no endpoint by itself: the row's own note
    (``signals.py``, ``ChangeQuerySet``) says which."""
    connection = transaction.get_connection(using)
    if not connection.in_atomic_block:
        return None
    note_change(kind, uris, using=using, insert=insert, touches=Touches())
    batch: _Batch = getattr(connection, _BATCH_ATTR)
    return batch.changeset


def open_changeset_id(using: str | None = None) -> int | None:
    """The id of the current transaction's change set if its first change opened it already; None
    outside a transaction or before its first change (nothing is opened here)."""
    connection = transaction.get_connection(using)
    if not connection.in_atomic_block:
        return None
    batch: _Batch | None = getattr(connection, _BATCH_ATTR, None)
    if batch is None or _queued_flush(on_commit_entries(connection), batch) is None:
        return None
    return batch.changeset if batch.is_open(connection) else None


def _queued_flush(entries: list[Any], batch: _Batch | None) -> Any:
    if batch is None:
        return None
    # From the end: the flush is kept last (note_change), so a transaction of n changes finds it
    # at once instead of after its n change entries (an import of 1,000 rows was quadratic here).
    return next((entry for entry in reversed(entries) if entry[1] == batch.flush), None)


def messages(
    kinds: Mapping[str, Collection[str]],
    changeset: Opened | None = None,
    reached: Mapping[str, list[str] | None] | None = None,
) -> list[dict[str, Any]]:
    """The bus ``changes`` messages of a change, one per kind in ``KINDS`` order. A change set's
    messages have ids of their own (``cs<uid>.<kind>``): the same whoever publishes them, and
    never those of another database's change set (the fan-out claims a message id once).
    ``reached``: the endpoint keys each kind reaches (``MESSAGE_KEY``); a kind without them (the
    reconciler's republish, ``migrate``) reaches every endpoint."""
    out = []
    for kind in KINDS:
        if kind not in kinds:
            continue
        message_id = uuid.uuid4().hex if changeset is None else f"cs{changeset.uid}.{kind}"
        # "at" (wall clock) lets every worker measure the bus delivery lag (/metrics).
        message: dict[str, Any] = {
            "id": message_id,
            "kind": kind,
            "uris": sorted(kinds[kind]),
            "at": time.time(),
        }
        if changeset is not None:
            message["changeset"] = changeset.id  # what the reconcilers' ledgers count
            message["changeset_uid"] = changeset.uid  # their newest, to find a restore by
        named = None if reached is None else reached.get(kind)
        if named is not None:
            message[MESSAGE_KEY] = named
        out.append(message)
    return out


def publish(
    kinds: dict[str, set[str]],
    changeset: Opened | None = None,
    reach: Mapping[str, Reach] | None = None,
    using: str | None = None,
) -> None:
    """Tell this process's providers, then every worker through the bus. Never raises: the data is
    committed already, and a bus outage must not turn a successful save into an error page (the
    workers' reconcilers find the change set instead). ``reach``: what each kind's changes reach
    (None: every endpoint)."""
    for provider in list(_providers):
        provider.mark_stale()
    from mcp_django.conf import mcp_settings
    from mcp_protocol.bus.base import CHANGES

    for message in messages(kinds, changeset, reached(kinds, reach, using)):
        # With tracing on, the publish is a PRODUCER span whose context travels in the message, so
        # each worker's fan-out of it (fanout/listener.py) is its child: one trace per change.
        with tracing.producer(f"publish registry change {message['kind']}", {"mcp.change.id": message["id"]}):
            carried = tracing.carrier()
            if carried:
                message["trace"] = carried
            try:
                mcp_settings.backend("BUS").publish_sync(CHANGES, message)
            except Exception:
                logger.exception("Could not publish registry change %s on the bus", message)


# Set while ``bulk_update`` runs the UPDATE Django builds for it (CASE expressions per row).
_bulk_updating: ContextVar[bool] = ContextVar("registry_bulk_updating", default=False)


class ChangeQuerySet(models.QuerySet):
    """Publishes queryset bulk writes, which bypass post_save/post_delete, with the endpoints their
    rows reach (``reach.py``: read with the URIs, before the write)."""

    def _note(self, uris: list[str] | None, touches: Touches | None) -> None:
        note_change(self.model.mcp_kind, uris or [], using=self.db, touches=touches)

    def _uris(self) -> list[str]:
        return list(self.values_list("uri", flat=True)) if hasattr(self.model, "uri") else []

    def update(self, **kwargs: Any) -> int:
        noted = not _bulk_updating.get()  # bulk_update's own UPDATE: it notes its rows itself
        uris = self._uris() if noted else []
        touches = of_rows(self, kwargs) if noted else None
        if any(f.name == "version" for f in self.model._meta.concrete_fields) and "version" not in kwargs:
            kwargs["version"] = models.F("version") + 1  # the row changed: so does its ETag
        count = super().update(**kwargs)
        if count and noted:
            self._note(uris + self._uris() if "uri" in kwargs else uris, touches)
        return count

    def bulk_create(self, objs: Any, *args: Any, **kwargs: Any) -> Any:
        created = super().bulk_create(objs, *args, **kwargs)
        if created:
            self._note([o.uri for o in created] if hasattr(self.model, "uri") else None,
                       of_objects(created))
        return created

    def bulk_update(self, objs: Any, fields: Any, *args: Any, **kwargs: Any) -> Any:
        objs = list(objs)
        fields = list(fields)
        touches = of_objects(objs, fields)
        token = _bulk_updating.set(True)
        try:
            count = super().bulk_update(objs, fields, *args, **kwargs)
        finally:
            _bulk_updating.reset(token)
        if objs:
            self._note([o.uri for o in objs] if hasattr(self.model, "uri") else None, touches)
            for obj in objs:
                if hasattr(obj, "remember"):
                    obj.remember()
        return count
