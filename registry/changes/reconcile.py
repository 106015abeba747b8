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
sessions get ``list_changed`` / ``resources/updated`` as for any change.

A change set counts as handled only once its message comes back on this worker's own
subscription (the one its fan-out reads), never when the publish is merely sent: during a Redis
outage the publish fails, and just after one it can succeed into a pub/sub whose subscribers have
not re-subscribed yet (Redis keeps no history: at-most-once). Until it is heard it stays suspect
and is published again at every check, and the floor does not move past it; repeats cost nothing,
the fan-out claims each message id once. A check whose publish fails rebuilds this worker's
snapshot meanwhile, so ``tools/list`` is right while the streams wait for Redis.

A database restored from a backup (or replaced) goes back under the workers, and restoring writes
no change set: each check also reads the newest change set the worker has read before; when it is
gone (or another row holds its id: ids repeat after a restore), the worker reads its ledger and
snapshot again and announces every list as changed, under message ids named by the vanished change
set's ``uid`` (the same on every worker that finds it: the fan-out writes it once). Retention that
deletes the newest change set (older than its window, named by no version) looks the same: clients
re-list once.

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
from mcp_protocol.fanout.notifications import KINDS

from . import publish as changes

if TYPE_CHECKING:
    from mcp_protocol.bus.base import Bus, Subscription
    from mcp_protocol.provider import Provider

logger = logging.getLogger(__name__)

INTERVAL = 3.0  # s between two checks (setting REGISTRY_RECONCILE_SECONDS; 0 turns them off)
SETTLE = 60.0  # s a change set may take to commit (setting REGISTRY_RECONCILE_SETTLE_SECONDS)

Row = tuple[int, datetime.datetime]  # a change set's id and when it opened
Newest = tuple[int, str]  # the newest change set a check read: its id and uid (hex)


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
        row found unseen; the floor moves up past the settled ones.

        Two checks: a change set's message is published after its commit, so a check between the
        two finds it committed and not yet heard, and would publish it again for nothing. A missed
        change set is not counted as seen here: only its message heard back (``saw``) does that,
        so one whose republish is lost (Redis down, or back before the subscribers) is reported
        again by the next check, and the floor waits for it."""
        unseen = {cid for cid, _ in rows if cid > self.floor and cid not in self.seen}
        missed = sorted(unseen & self.suspect)
        self.suspect = unseen
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
        self.newest: Newest | None = None
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
        floor, recent, self.newest = await _in_thread(_start, self.settle)
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
            changeset, uid = message.get("changeset"), message.get("changeset_uid")
            if isinstance(changeset, int) and not isinstance(changeset, bool):
                self.ledger.saw(changeset)
                # Heard before any check reads it: a restore right after it must still be found.
                if isinstance(uid, str) and (self.newest is None or changeset > self.newest[0]):
                    self.newest = (changeset, uid)

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
        rows, newest = await _in_thread(_since, self.ledger.floor, self.newest)
        if self.newest is not None and newest is None:
            await self._went_back(self.newest)
            return []
        self.newest = newest
        missed = self.ledger.missed(rows, timezone.now())
        if not missed:
            return []
        # Not marked seen here: a publish that fails, or succeeds while no worker has re-subscribed,
        # must be tried again; the mark comes when _read hears the message back.
        logger.info("registry change sets %s never came on the bus: publishing them again", missed)
        published = True
        found = await _in_thread(_changed, missed)
        # Nothing to publish (deleted since, or no list named): no message will come back for it.
        for changeset in set(missed) - {opened.id for opened, changed in found if changed}:
            self.ledger.saw(changeset)
        for opened, changed in found:
            for message in changes.messages(changed, opened):
                try:
                    await self.bus.publish(CHANGES, message)
                except Exception:
                    published = False
                    logger.warning("could not publish missed change %s", message, exc_info=True)
        if not published:
            await self.provider.refresh()  # this worker serves them, at least
        return missed


    async def _went_back(self, gone: Newest) -> None:
        """The database no longer has change set ``gone``: restored from a backup, or replaced."""
        logger.warning("registry change set %s is gone from the database (restored?): reading the "
                       "registry again and announcing every list as changed", gone[0])
        await self._prime()  # what the database has now counts as seen, and is served
        for message in changes.messages({kind: () for kind in KINDS}):
            # Named by what vanished, not at random: every worker that finds it publishes the same
            # ids, and the fan-out writes them once.
            message["id"] = f"gone{gone[1]}.{message['kind']}"
            try:
                await self.bus.publish(CHANGES, message)
            except Exception:
                logger.warning("could not announce the restored registry", exc_info=True)


async def _in_thread(func: Any, *args: Any) -> Any:
    def run() -> Any:
        try:
            return func(*args)
        finally:
            close_old_connections()  # nothing else in the pool thread would close it

    return await sync_to_async(run, thread_sensitive=False)()


def _start(settle: float) -> tuple[int, list[int], Newest | None]:
    """The floor (the newest settled change set), the ids of the recent ones above it, and the
    newest of all."""
    ChangeSet = changes.changeset_model()

    cutoff = timezone.now() - datetime.timedelta(seconds=settle)
    recent = list(ChangeSet.objects.filter(created_at__gt=cutoff).values_list("id", flat=True))
    settled = ChangeSet.objects.filter(created_at__lte=cutoff).order_by("-id").values_list("id", flat=True)
    floor = settled.first() or 0
    newest = ChangeSet.objects.order_by("-id").values_list("id", "uid").first()
    return floor, [cid for cid in recent if cid > floor], _newest(newest)


def _since(floor: int, newest: Newest | None) -> tuple[list[Row], Newest | None]:
    """The change sets above ``floor``, and the newest change set now: the newest of them, else
    ``newest`` if the database still has it (same id, same uid), else None (it went back)."""
    ChangeSet = changes.changeset_model()

    rows = list(ChangeSet.objects.filter(id__gt=floor).order_by("id").values_list("id", "created_at", "uid"))
    if newest is not None and not any(cid == newest[0] and uid.hex == newest[1] for cid, _, uid in rows):
        # Not among them (below the floor, or gone): one look by primary key.
        if not ChangeSet.objects.filter(pk=newest[0], uid=newest[1]).exists():
            return [(cid, opened) for cid, opened, _ in rows], None
    now = (rows[-1][0], rows[-1][2].hex) if rows else newest
    return [(cid, opened) for cid, opened, _ in rows], now


def _newest(row: Any) -> Newest | None:
    return None if row is None else (int(row[0]), row[1].hex)


def _changed(ids: list[int]) -> list[tuple[changes.Opened, dict[str, list[str]]]]:
    """What each change set changed, as ``changes.messages`` takes it: kind → the URIs."""
    ChangeSet = changes.changeset_model()

    rows = ChangeSet.objects.filter(id__in=ids).order_by("id").values_list("id", "uid", "kinds", "uris")
    # The URIs are the resources' (``resources/updated``); the other kinds carry none.
    return [
        (changes.Opened(cid, uid.hex), {kind: (list(uris) if kind == "resources" else []) for kind in kinds})
        for cid, uid, kinds, uris in rows
    ]
