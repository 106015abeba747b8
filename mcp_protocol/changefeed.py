"""This process's feed of committed registry changes, for ``subscriptions/listen`` streams.

Every worker already takes each change from the bus ``changes`` channel, in bus (= commit) order,
once (``fanout/listener.py``; stdio's watcher). It hands each one to ``ChangeFeed.publish`` after its
snapshot is rebuilt, and every listen stream open on this worker gets it, in that order, once: the
stream reads its own queue. So a change committed anywhere reaches every listen stream on every
worker exactly once, with no store in between: 2026-07-28 streams are not resumable
(basic/transports/streamable-http.mdx "Resumable SSE streams via Last-Event-ID are not
supported"), so there is nothing to replay.

A bus outage may lose changes (the bus delivers ``RESYNC`` afterwards); the feed passes it on as a
change of every kind, so each stream tells its client everything it asked about may have changed
(a spurious ``list_changed`` costs a re-list; a missed one costs a stale client).

``close()`` (server shutdown) ends every subscription: its handler answers the listen request
(graceful closure, subscriptions.mdx) and the stream ends.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

Change = dict[str, Any]  # {"kind": "tools"|"resources"|"prompts", "uris": [...]} or EVERYTHING
EVERYTHING: Change = {"kind": "*", "uris": "*"}
_END = object()


class FeedSubscription:
    def __init__(self, feed: ChangeFeed) -> None:
        self._feed = feed
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

    def close(self) -> None:
        self._feed._subscribers.discard(self)

    def __enter__(self) -> FeedSubscription:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class ChangeFeed:
    def __init__(self) -> None:
        self._subscribers: set[FeedSubscription] = set()

    def subscribe(self) -> FeedSubscription:
        """Receives every change published from now on (use as a context manager)."""
        subscription = FeedSubscription(self)
        self._subscribers.add(subscription)
        return subscription

    def publish(self, change: Change) -> None:
        for subscription in list(self._subscribers):
            subscription.put(change)

    def close(self) -> None:
        for subscription in list(self._subscribers):
            subscription.put(_END)
        self._subscribers.clear()

    def __len__(self) -> int:
        return len(self._subscribers)
