"""From a committed registry change to the notifications every affected stream must get, once.

Every worker subscribes to the bus ``changes`` channel (message ``{"id", "kind", "uris"}``). Each
rebuilds its provider snapshot (in a thread) while it claims the change and writes it: the first
streams get their notification without waiting for the rebuild, and the requests this worker serves
meanwhile wait for it instead (``Provider.mark_refreshing``), so a client that re-lists after
``list_changed`` on the writer's worker still sees the change. The first worker to
``ClaimStore.claim_once("fanout:<id>")`` owns the change and marks it split (``<key>#split``);
every worker that got it then writes a share of it in parts (``fanout_parts.py``; the others only
once it is marked, so a part they win is one nobody wrote any of): the notifications go to the
standalone-stream log (``STANDALONE_STREAM``) of each live session:
``notifications/<kind>/list_changed`` for every initialized session ([L] server/tools.mdx,
resources.mdx, prompts.mdx "List Changed Notification"), and ``notifications/resources/updated
{uri}`` for every subscriber of a changed URI (server/resources.mdx "Subscriptions"). A GET stream
is a ``listen()`` on that log, so it delivers each notification exactly once, across reconnects
(Last-Event-ID) and workers.

Order: every worker takes the changes in bus order and moves to the next one only when every part
of the current one is written (``Claim.DONE``), whoever wrote it; so change N+1 is never written
before change N and every stream sees the notifications in commit order. A writer holds its lease
(``LEASE``) as long as it writes (renewed, ``fanout_lease.py``); one that dies mid-part lets it
lapse and the next worker to ask takes the part over (``Claim.RETAKEN``): nothing is lost, and
nothing is written twice either, because every notification's log entry is tagged with its change
and the taker skips the sessions whose log already has it (``EventStore.tagged``).

Does not know about HTTP: it only writes logs. Does not import Django.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
from collections.abc import Callable
from typing import Any

from .bus.base import CHANGES, RESYNC, Bus, Subscription
from .changefeed import EVERYTHING, ChangeFeed
from .fanout_lease import Leases
from .fanout_parts import DONE_TTL, KINDS, POLL_MAX, POLL_MIN, Job, write_parts
from .provider import Provider
from .stores.claims import Claim
from .stores.events import EventStore
from .stores.sessions import SessionStore

logger = logging.getLogger("mcp_protocol.fanout")

LEASE = 5.0  # s: a change's (and a part's) writer holds it this long; then it is taken over
PROBE = 0.001  # s: the lease of a probe of the "split" marker (nobody works under it)
REBUILD_AFTER = 0.05  # s: the longest the snapshot rebuild waits for this worker's first write


def change_key(message: dict[str, Any]) -> str:
    """The claim key of one change: its id, or (a publisher without ids) a digest of it."""
    change_id = message.get("id")
    if isinstance(change_id, str | int) and not isinstance(change_id, bool):
        return f"fanout:{change_id}"
    digest = hashlib.sha256(json.dumps(message, sort_keys=True).encode()).hexdigest()[:32]
    return f"fanout:{digest}"


class Fanout:
    def __init__(self, provider: Provider, sessions: SessionStore, events: EventStore, bus: Bus,
                 *, lease: float = LEASE, on_message: Callable[[dict[str, Any]], None] | None = None,
                 feed: ChangeFeed | None = None) -> None:
        self.provider, self.sessions, self.events, self.bus = provider, sessions, events, bus
        self.lease = lease
        self.feed = feed  # this worker's subscriptions/listen streams: every change, in bus order
        self.on_message = on_message  # an observer of every bus message (the transport's metrics)
        self._subscription: Subscription | None = None
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        # Subscribed before start() returns: no change published after the first request is missed.
        self._subscription = await self.bus.subscribe(CHANGES)
        self._task = asyncio.create_task(self._run(self._subscription))

    @property
    def listening(self) -> bool:
        """Subscribed to ``changes`` and reading it (readiness: a worker that is not would serve
        a stale registry)."""
        return self._task is not None and not self._task.done()

    async def stop(self) -> None:
        if self._subscription is not None:
            with contextlib.suppress(Exception):
                await self._subscription.close()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
        self._subscription = self._task = None

    async def _run(self, subscription: Subscription) -> None:
        async for message in subscription:
            try:
                if self.on_message is not None:
                    self.on_message(message)
                if message == RESYNC:
                    # The bus was cut off: changes may have been missed (a commit while Redis was
                    # down publishes nothing). Rebuild from the database; clients re-list anyway
                    # when their streams resume.
                    await self.provider.refresh()
                    if self.feed is not None:
                        self.feed.publish(EVERYTHING)
                    continue
                await self.apply(message)
            except Exception:
                logger.exception("could not fan out change %r", message)

    async def apply(self, message: dict[str, Any]) -> int:
        """Handle one change; returns the number of notifications this worker wrote."""
        # The snapshot is rebuilt (a database read in a thread, 8-30 ms under load) while the
        # change is written, not before: the first streams do not wait for it. A client that
        # re-lists on this worker after list_changed waits for it instead (Server._run awaits
        # the rebuild marked here), so it still sees the change.
        wrote = asyncio.Event()
        rebuild = asyncio.ensure_future(self._rebuild(message, wrote))
        self.provider.mark_refreshing(rebuild)
        try:
            return await self._apply(message, wrote)
        except asyncio.CancelledError:
            rebuild.cancel()
            raise
        finally:
            if not rebuild.cancelled():
                await rebuild  # never raises (_rebuild logs): the snapshot is current on return

    async def _rebuild(self, message: dict[str, Any], wrote: asyncio.Event) -> None:
        # Started once this worker's first slice is written (or it has none to write soon): the
        # rebuild's thread holds the GIL in 5 ms turns (sys.getswitchinterval), and each of the
        # round trips before the first write waited for it (py-spy/timings: 10-15 ms of the
        # first stream's 30). Requests wait for it all the same (mark_refreshing).
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(REBUILD_AFTER):
                await wrote.wait()
        try:
            await self.provider.refresh()
        except Exception:
            logger.exception("could not rebuild the snapshot for change %r", message)
        if self.feed is not None:
            # Listen streams need no claim: every worker serves its own, each change once.
            self.feed.publish(message)

    async def _apply(self, message: dict[str, Any], wrote: asyncio.Event) -> int:
        kind, uris = message.get("kind"), message.get("uris") or []
        key = change_key(message)
        # Not load(): loading would slide every idle session's expiry. Readiness is checked a
        # slice at a time as the slices are written (fanout_parts.py). Listed while the change
        # is claimed: both are round trips on the way to the first write.
        listing = asyncio.ensure_future(self.sessions.session_ids()) if kind in KINDS else None
        split: asyncio.Future[None] | None = None
        leases = Leases(self.events, self.lease)
        try:
            claim = await self._turn(key)
            if claim is Claim.DONE:
                return 0
            if claim is not Claim.HELD:
                leases.hold(key)  # renewed while its parts are written, however long it takes
                # The owner says the change is written in parts: only then may the other
                # workers help (a part they win is one nobody wrote any of). Said while it
                # starts on its own parts, not before.
                split = asyncio.ensure_future(self.events.claims.finish_once(f"{key}#split", DONE_TTL))
            listed = await listing if listing is not None else []
            job = Job(key, kind, uris if isinstance(uris, list) else [], listed, leases, wrote,
                      retaken=claim is Claim.RETAKEN)
            written = await write_parts(self, job)
            if split is not None:
                await split
            if claim is not Claim.HELD:
                await self.events.claims.finish_once(key, DONE_TTL)
            return written
        finally:
            wrote.set()  # nothing (more) to write first: the rebuild need not wait
            await leases.close()
            # On an error midway: a change never marked split is taken over whole when its
            # lease lapses (RETAKEN), so dropping the marker loses nothing.
            for task in (listing, split):
                if task is not None and not task.done():
                    task.cancel()
                elif task is not None and not task.cancelled():
                    task.exception()  # retrieved: the error that matters is the one raised

    async def _turn(self, key: str) -> Claim:
        """WON or RETAKEN: this worker owns the change ``key``; HELD: another worker owns it and
        has split it in parts, which this one helps write; DONE: written."""
        pause = POLL_MIN
        while True:
            claim = await self.events.claims.claim_once(key, self.lease)
            if claim is not Claim.HELD:
                return claim
            # A probe with a lease that lapses at once: DONE only once the owner split it.
            if await self.events.claims.claim_once(f"{key}#split", PROBE) is Claim.DONE:
                return Claim.HELD
            # Its owner has not started the parts (or died first): the next change must wait,
            # or the two could reach a stream in the wrong order.
            await asyncio.sleep(pause)
            pause = min(pause * 2, POLL_MAX)
