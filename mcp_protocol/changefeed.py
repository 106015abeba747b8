"""This process's feed of committed registry changes, for ``subscriptions/listen`` streams.

Every worker already takes each change from the bus ``changes`` channel, in bus (= commit) order,
once (``fanout/listener.py``; stdio's watcher). It hands each one to ``ChangeFeed.publish`` after its
snapshot is rebuilt, and every listen stream open on this worker gets it, in that order, once: the
stream reads its own queue. So a change committed anywhere reaches every listen stream on every
worker exactly once, with no store in between: 2026-07-28 streams are not resumable
(basic/transports/streamable-http.mdx "Resumable SSE streams via Last-Event-ID are not
supported"), so there is nothing to replay.

A change names the endpoints it reaches (``endpoints.MESSAGE_KEY``; without it, every endpoint):
each subscription belongs to one endpoint, and ``publish`` hands a change only to the
subscriptions of the endpoints it reaches, found by endpoint, so the streams of other endpoints do
no work for it (issue 39 item 4). A subscription of no endpoint (``None``) gets every change.

A bus outage may lose changes (the bus delivers ``RESYNC`` afterwards); the feed passes it on as a
change of every kind, so each stream tells its client everything it asked about may have changed
(a spurious ``list_changed`` costs a re-list; a missed one costs a stale client).

``close()`` (server shutdown) ends every subscription: its handler answers the listen request
(graceful closure, subscriptions.mdx) and the stream ends. ``end_for(principals)`` does the same
for the subscriptions of principals whose key was revoked or expired.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from .endpoints import MESSAGE_KEY

Change = dict[str, Any]  # a bus ``changes`` message (fanout/notifications.py) or EVERYTHING
EVERYTHING: Change = {"kind": "*", "uris": "*"}
_END = object()


class FeedSubscription:
    def __init__(self, feed: ChangeFeed, owner: str | None = None, endpoint: str | None = None) -> None:
        self._feed = feed
        self.owner = owner  # the principal that listens (its key revoked: ``end_for``)
        self.endpoint = endpoint  # the endpoint key it listens on (None: it hears every endpoint)
        self._queue: asyncio.Queue[Any] = asyncio.Queue()

    def put(self, item: Any) -> None:
        self._queue.put_nowait(item)

    def __aiter__(self) -> AsyncIterator[Change]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[Change]:
        while True:
            item = await self._queue.get()
            if item is _END:
                return
            yield item

    def end(self) -> None:
        """End this subscription as ``ChangeFeed.close`` ends them all (graceful closure)."""
        self.put(_END)
        self.close()

    def close(self) -> None:
        self._feed._discard(self)

    def __enter__(self) -> FeedSubscription:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class ChangeFeed:
    def __init__(self) -> None:
        # endpoint key (None: every endpoint) -> its subscriptions
        self._subscribers: dict[str | None, set[FeedSubscription]] = {}

    def subscribe(self, owner: str | None = None, endpoint: str | None = None) -> FeedSubscription:
        """Receives every change published from now on that reaches ``endpoint`` (None: every
        change); use as a context manager."""
        subscription = FeedSubscription(self, owner, endpoint)
        self._subscribers.setdefault(endpoint, set()).add(subscription)
        return subscription

    def _discard(self, subscription: FeedSubscription) -> None:
        found = self._subscribers.get(subscription.endpoint)
        if found is not None:
            found.discard(subscription)
            if not found:
                del self._subscribers[subscription.endpoint]

    def _all(self) -> list[FeedSubscription]:
        return [s for found in self._subscribers.values() for s in found]

    def publish(self, change: Change) -> None:
        named = change.get(MESSAGE_KEY)
        if isinstance(named, list):  # as endpoints.reaches: only a list narrows the audience
            keys = [None, *(e for e in dict.fromkeys(named) if isinstance(e, str))]
            reached = [s for key in keys for s in self._subscribers.get(key, ())]
        else:
            reached = self._all()
        for subscription in reached:
            subscription.put(change)

    def end_for(self, owners: set[str]) -> None:
        """End the subscriptions of ``owners`` (principals whose key stopped working)."""
        for subscription in self._all():
            if subscription.owner in owners:
                subscription.end()

    def close(self) -> None:
        for subscription in self._all():
            subscription.put(_END)
        self._subscribers.clear()

    def __len__(self) -> int:
        return sum(len(found) for found in self._subscribers.values())
