"""No change missed: every worker checks the database for change sets its bus never delivered.

A worker learns of a change from the bus ``changes`` message published after commit
(``publish.py``). That message can be lost: the process died between commit and publish, the
writer used another ``MCP_KEY_PREFIX`` (another terminal, another fleet), or it had an in-memory
bus of its own (``manage.py mcp_stdio`` beside a server with no Redis, an edit in the admin). So
every worker runs a ``Reconciler`` (started by ``RegistryProvider.start`` once the transport listens
to the bus): it notes the change set of every ``changes`` message it receives, and every
``REGISTRY_RECONCILE_SECONDS`` (off the hot path, in a thread) reads the ids of the change sets
above its floor, one query by primary key. A change set it never heard of is published again on
this worker's bus with the messages of the original (``changes.messages``: same ids, so the fan-out
claims it once however many workers republish it); every worker then rebuilds its snapshot and the
sessions get ``list_changed`` / ``resources/updated`` as for any change. If the bus refuses the
publish too, this worker at least rebuilds its own snapshot.

Ids are handed out when a change set opens and become visible when it commits, so a lower id can
commit after a higher one. The floor (below which nothing is looked at again) only moves past
change sets older than ``REGISTRY_RECONCILE_SETTLE_SECONDS``: a transaction held open longer than
that, whose publish is lost too, is the one change this cannot find. The writers' clocks and this
worker's must agree within the same margin.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import logging
import random
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import close_old_connections
from django.utils import timezone

from mcp_protocol.bus.base import CHANGES

from . import publish as changes

if TYPE_CHECKING:
    from mcp_protocol.bus.base import Bus, Subscription
    from mcp_protocol.provider import Provider

logger = logging.getLogger(__name__)

INTERVAL = 3.0  # s between two checks (setting REGISTRY_RECONCILE_SECONDS; 0 turns them off)
SETTLE = 60.0  # s a change set may take to commit (setting REGISTRY_RECONCILE_SETTLE_SECONDS)

Row = tuple[int, datetime.datetime]  # a change set's id and when it opened


def interval() -> float:
    return float(getattr(settings, "REGISTRY_RECONCILE_SECONDS", INTERVAL))


def settle() -> float:
    return float(getattr(settings, "REGISTRY_RECONCILE_SETTLE_SECONDS", SETTLE))


class Ledger:
    """Which change sets this worker has seen: all up to ``floor``, and those in ``seen`` above it.
    Pure: the database reads are the reconciler's."""

    def __init__(self, floor: int, seen: Sequence[int] = (), settle: float = SETTLE) -> None:
        self.floor, self.seen, self.settle = floor, set(seen), settle
        self.suspect: set[int] = set()  # found unseen by the last check

    def saw(self, changeset: int) -> None:
        if changeset > self.floor:
            self.seen.add(changeset)

    def missed(self, rows: Sequence[Row], now: datetime.datetime) -> list[int]:
        """The change sets among ``rows`` (every one above the floor, by id) that two checks in a
        row found unseen, now counted as seen; the floor moves up past the settled ones.

        Two checks: a change set's message is published after its commit, so a check between the
        two finds it committed and not yet heard, and would publish it again for nothing."""
        unseen = {cid for cid, _ in rows if cid > self.floor and cid not in self.seen}
        missed = sorted(unseen & self.suspect)
        self.suspect = unseen - self.suspect
        self.seen.update(missed)
        cutoff = now - datetime.timedelta(seconds=self.settle)
        for cid, opened in sorted(rows):
            if opened > cutoff or cid in self.suspect:  # a suspect is looked at again next time
                break
            self.floor = max(self.floor, cid)
        self.seen = {cid for cid in self.seen if cid > self.floor}
        return missed


class Reconciler:
    def __init__(self, provider: Provider, bus: Bus, every: float, settle: float = SETTLE) -> None:
        self.provider, self.bus, self.every, self.settle = provider, bus, every, settle
        self.loop = asyncio.get_running_loop()
        self.ledger = Ledger(0, settle=settle)
        self._primed = False
        self._subscription: Subscription | None = None
        self._tasks: list[asyncio.Task[None]] = []

    async def start(self) -> None:
        # Subscribed first: a change published from here on is noted as seen.
        self._subscription = await self.bus.subscribe(CHANGES)
        try:
            await self._prime()
        except Exception:
            # A database not migrated this far (no change set table yet): serving goes on, and
            # the first check that can read it starts from there.
            logger.warning("could not read the registry's change sets; checking again later", exc_info=True)
        self._tasks = [asyncio.create_task(self._read(self._subscription)), asyncio.create_task(self._poll())]

    async def _prime(self) -> None:
        floor, recent = await _in_thread(_start, self.settle)
        self.ledger = Ledger(floor, recent, settle=self.settle)
        self._primed = True
        # What the ledger counts as seen is in the snapshot: a change set committed between the
        # transport's first refresh and the read above would otherwise be counted and not served.
        await self.provider.refresh()

    async def stop(self) -> None:
        if self._subscription is not None:
            with contextlib.suppress(Exception):
                await self._subscription.close()
        for task in self._tasks:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._subscription, self._tasks = None, []

    async def _read(self, subscription: Subscription) -> None:
        async for message in subscription:
            changeset = message.get("changeset")
            if isinstance(changeset, int) and not isinstance(changeset, bool):
                self.ledger.saw(changeset)

    async def _poll(self) -> None:
        while True:
            # Jittered: workers started together do not all query (and republish) at once.
            await asyncio.sleep(self.every * random.uniform(0.75, 1.25))
            try:
                await self.check()
            except Exception:
                logger.warning("could not check the registry for missed changes", exc_info=True)

    async def check(self) -> list[int]:
        """One check: the change sets found missed by it and the one before (published again)."""
        if not self._primed:
            await self._prime()
            return []
        rows = await _in_thread(_since, self.ledger.floor)
        missed = self.ledger.missed(rows, timezone.now())
        if not missed:
            return []
        logger.info("registry change sets %s never came on the bus: publishing them again", missed)
        published = True
        for changeset, changed in await _in_thread(_changed, missed):
            for message in changes.messages(changed, changeset):
                try:
                    await self.bus.publish(CHANGES, message)
                except Exception:
                    published = False
                    logger.warning("could not publish missed change %s", message, exc_info=True)
        if not published:
            await self.provider.refresh()  # this worker serves them, at least
        return missed


async def _in_thread(func: Any, *args: Any) -> Any:
    def run() -> Any:
        try:
            return func(*args)
        finally:
            close_old_connections()  # nothing else in the pool thread would close it

    return await sync_to_async(run, thread_sensitive=False)()


def _start(settle: float) -> tuple[int, list[int]]:
    """The floor (the newest settled change set) and the ids of the recent ones above it."""
    ChangeSet = changes.changeset_model()

    cutoff = timezone.now() - datetime.timedelta(seconds=settle)
    recent = list(ChangeSet.objects.filter(created_at__gt=cutoff).values_list("id", flat=True))
    settled = ChangeSet.objects.filter(created_at__lte=cutoff).order_by("-id").values_list("id", flat=True)
    floor = settled.first() or 0
    return floor, [cid for cid in recent if cid > floor]


def _since(floor: int) -> list[Row]:
    ChangeSet = changes.changeset_model()

    return list(ChangeSet.objects.filter(id__gt=floor).order_by("id").values_list("id", "created_at"))


def _changed(ids: list[int]) -> list[tuple[int, dict[str, list[str]]]]:
    """What each change set changed, as ``changes.messages`` takes it: kind → the URIs."""
    ChangeSet = changes.changeset_model()

    rows = ChangeSet.objects.filter(id__in=ids).order_by("id").values_list("id", "kinds", "uris")
    # The URIs are the resources' (``resources/updated``); the other kinds carry none.
    return [
        (cid, {kind: (list(uris) if kind == "resources" else []) for kind in kinds})
        for cid, kinds, uris in rows
    ]
