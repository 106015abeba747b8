"""From a committed registry change to the notifications every affected stream must get, once.

Every worker subscribes to the bus ``changes`` channel (message ``{"id", "kind", "uris"}``). Each
rebuilds its provider snapshot first, so a client that re-lists after ``list_changed`` sees the
change wherever its next request lands. Then exactly one worker — the winner of
``EventStore.claim_once("fanout:<id>")`` — appends the notifications to the standalone-stream log
(``STANDALONE_STREAM``) of each live session: ``notifications/<kind>/list_changed`` for every
initialized session ([L] server/tools.mdx, resources.mdx, prompts.mdx "List Changed
Notification"), and ``notifications/resources/updated {uri}`` for every subscriber of a changed URI
(server/resources.mdx "Subscriptions"). A GET stream is a ``listen()`` on that log, so it delivers
each notification exactly once, across reconnects (Last-Event-ID) and workers.

Order: every worker takes the changes in bus order and moves to the next one only when the current
one is written (``Claim.DONE``), whoever wrote it; so change N+1 is never written before change N
and every stream sees the notifications in commit order. A winner that dies mid-change lets its
lease (``LEASE``) lapse and the next worker to ask takes the change over (``Claim.RETAKEN``):
nothing is lost, and nothing is written twice either, because every notification's log entry is
tagged with its change and the taker skips the sessions whose log already has it
(``EventStore.tagged``).

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
from .jsonrpc import notification
from .provider import Provider
from .stores.base import STANDALONE_STREAM, Claim, EventStore, SessionStore

logger = logging.getLogger("mcp_protocol.fanout")

KINDS = ("tools", "resources", "prompts")
LEASE = 5.0  # s: a change's writer holds it this long; a dead writer's change is taken over after
DONE_TTL = 3600.0  # s: how long a written change stays known as written
POLL_MAX = 0.05  # s: the longest pause between two asks while another worker writes a change
RETAKE_WINDOW = 30.0  # s: how far back a taken-over change looks for what its writer wrote


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
        """Handle one change; returns the number of notifications written (0 on other workers)."""
        # The snapshot first (a database read in a thread), so a client re-listing after
        # list_changed on this worker sees the change; the change is claimed after it, so the
        # lease covers only the listing and the writes (milliseconds), never a slow database.
        try:
            await self.provider.refresh()
        except Exception:
            logger.exception("could not rebuild the snapshot for change %r", message)
        if self.feed is not None:
            # Listen streams need no claim: every worker serves its own, each change once.
            self.feed.publish(message)
        kind = message.get("kind")
        key = change_key(message)
        claim = await self._turn(key)
        if claim is Claim.DONE:
            return 0
        # Not load(): loading would slide every idle session's expiry.
        ready = await self.sessions.initialized_session_ids() if kind in KINDS else []
        written = await self._write(key, kind, message.get("uris") or [], ready, claim is Claim.RETAKEN)
        await self.events.finish_once(key, DONE_TTL)
        return written

    async def _turn(self, key: str) -> Claim:
        """Wait until the change ``key`` is this worker's to write (WON, RETAKEN) or written (DONE)."""
        pause = 0.002
        while True:
            claim = await self.events.claim_once(key, self.lease)
            if claim is not Claim.HELD:
                return claim
            # Another worker writes it now (a few ms for 1,000 sessions); the next change must
            # wait for it, or the two could reach a stream in the wrong order.
            await asyncio.sleep(pause)
            pause = min(pause * 2, POLL_MAX)

    async def _write(self, key: str, kind: Any, uris: Any, ready: list[str], retaken: bool) -> int:
        written = 0
        if kind in KINDS and self.provider.capabilities.list_changed:
            note = notification(f"notifications/{kind}/list_changed", None)
            written += await self._send(ready, note, f"{key}|list", retaken)
        if self.provider.capabilities.resources_subscribe:
            for uri in uris if isinstance(uris, list) else []:
                if not isinstance(uri, str):
                    continue
                updated = notification("notifications/resources/updated", {"uri": uri})
                subscribers = await self.sessions.subscribers(uri)
                written += await self._send(subscribers, updated, f"{key}|{uri}", retaken)
        return written

    async def _send(self, session_ids: list[str], note: dict[str, Any], tag: str, retaken: bool) -> int:
        if retaken:
            # A writer died mid-change: skip the sessions it reached (their entries carry the tag).
            reached = await self.events.tagged(session_ids, STANDALONE_STREAM, tag, RETAKE_WINDOW)
            session_ids = [sid for sid in session_ids if sid not in reached]
        # One broadcast (Redis: pipelined in batches), not a round trip per session.
        return await self.events.broadcast(session_ids, STANDALONE_STREAM, note, tag=tag)
