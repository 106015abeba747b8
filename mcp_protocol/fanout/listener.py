"""The ``changes`` listener: every committed registry change, from the bus to this worker's
snapshot, its listen streams and (written once across workers) the stream of every session of the
endpoints it reaches.

Every worker subscribes to the bus ``changes`` channel (message ``{"id", "kind", "uris",
"endpoints"}``: ``notifications.py``) and takes the changes in bus (= commit) order. For each, it
rebuilds its provider snapshot (in a thread) while it writes the change (``writer.ChangeWriter``:
claimed under ``change_key``, written in parts by every worker that got it, exactly once): the
first streams get their notification without waiting for the rebuild, and the requests this worker
serves meanwhile wait for it instead (``Provider.mark_refreshing``), so a client that re-lists
after ``list_changed`` on the writer's worker still sees the change. Once rebuilt, the change goes
to this worker's ``subscriptions/listen`` streams (``ChangeFeed``: no claim, every worker serves
its own).

A worker moves to the next change only when every part of the current one is written, whoever
wrote it; so change N+1 is never written before change N and every stream sees the notifications
in commit order. A bus cut off (``RESYNC``): the snapshot is rebuilt from the database and the
listen streams told everything may have changed; clients re-list anyway when their streams resume.

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

from .. import tracing
from ..bus.base import CHANGES, RESYNC, Bus, Subscription
from ..changefeed import EVERYTHING, ChangeFeed
from ..endpoints import MESSAGE_KEY
from ..provider import Provider
from ..stores.events import EventStore
from ..stores.sessions import SessionStore
from .claim import LEASE
from .notifications import Change
from .writer import ChangeWriter

logger = logging.getLogger("mcp_protocol.fanout")

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
        self.provider, self.bus = provider, bus
        self.writer = ChangeWriter(sessions, events, lease=lease)
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
        # With tracing on: a CONSUMER span, the child of the publish that sent the change.
        kind = message.get("kind")
        attributes = {"mcp.change.id": str(message.get("id")), "mcp.change.kind": str(kind)}
        endpoints = message.get(MESSAGE_KEY)
        if isinstance(endpoints, list):  # which endpoints' streams it reaches (issue 39)
            attributes["mcp.change.endpoints"] = ",".join(str(e) for e in endpoints)
        with tracing.consumer(f"fan out registry change {kind}", message.get("trace"), attributes):
            return await self._apply(message)

    async def _apply(self, message: dict[str, Any]) -> int:
        # The snapshot is rebuilt (a database read in a thread, 8-30 ms under load) while the
        # change is written, not before: the first streams do not wait for it. A client that
        # re-lists on this worker after list_changed waits for it instead (Server._run awaits
        # the rebuild marked here), so it still sees the change.
        wrote = asyncio.Event()
        rebuild = asyncio.ensure_future(self._rebuild(message, wrote))
        self.provider.mark_refreshing(rebuild)
        try:
            return await self.writer.write(change_key(message), Change.of(message),
                                           self.provider.capabilities, wrote=wrote)
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
