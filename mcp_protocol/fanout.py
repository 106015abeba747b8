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

Does not know about HTTP: it only writes logs. Does not import Django.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
from typing import Any

from .bus.base import CHANGES, Bus, Subscription
from .jsonrpc import notification
from .provider import Provider
from .stores.base import STANDALONE_STREAM, EventStore, SessionStore

logger = logging.getLogger("mcp_protocol.fanout")

KINDS = ("tools", "resources", "prompts")
CLAIM_TTL = 3600.0


def change_key(message: dict[str, Any]) -> str:
    """The claim key of one change: its id, or (a publisher without ids) a digest of it."""
    change_id = message.get("id")
    if isinstance(change_id, str | int) and not isinstance(change_id, bool):
        return f"fanout:{change_id}"
    digest = hashlib.sha256(json.dumps(message, sort_keys=True).encode()).hexdigest()[:32]
    return f"fanout:{digest}"


class Fanout:
    def __init__(self, provider: Provider, sessions: SessionStore, events: EventStore, bus: Bus) -> None:
        self.provider, self.sessions, self.events, self.bus = provider, sessions, events, bus
        self._subscription: Subscription | None = None
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        # Subscribed before start() returns: no change published after the first request is missed.
        self._subscription = await self.bus.subscribe(CHANGES)
        self._task = asyncio.create_task(self._run(self._subscription))

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
                await self.apply(message)
            except Exception:
                logger.exception("could not fan out change %r", message)

    async def apply(self, message: dict[str, Any]) -> int:
        """Handle one change; returns the number of notifications written (0 on other workers)."""
        # The snapshot rebuild (a database read in a thread) overlaps the claim and the listing of
        # the sessions; notifications are written only once it is done, so a client re-listing
        # after list_changed on this worker sees the change.
        refreshed = asyncio.ensure_future(self.provider.refresh())
        kind = message.get("kind")
        try:
            won = await self.events.claim_once(change_key(message), CLAIM_TTL)
            # Not load(): loading would slide every idle session's expiry.
            ready = await self.sessions.initialized_session_ids() if won and kind in KINDS else []
        except asyncio.CancelledError:
            refreshed.cancel()
            raise
        except Exception:
            await refreshed  # this worker's snapshot matters even when the store is down
            raise
        await refreshed
        if not won:
            return 0
        written = 0
        if kind in KINDS and self.provider.capabilities.list_changed:
            note = notification(f"notifications/{kind}/list_changed", None)
            # One broadcast (Redis: pipelined in batches), not a round trip per session.
            written += await self.events.broadcast(ready, STANDALONE_STREAM, note)
        uris = message.get("uris") or []
        if self.provider.capabilities.resources_subscribe:
            for uri in uris if isinstance(uris, list) else []:
                if not isinstance(uri, str):
                    continue
                updated = notification("notifications/resources/updated", {"uri": uri})
                subscribers = await self.sessions.subscribers(uri)
                written += await self.events.broadcast(subscribers, STANDALONE_STREAM, updated)
        return written
