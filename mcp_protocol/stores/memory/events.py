"""``MemoryEventStore``: the in-process event store, the single-process default and the
reference for Redis.

State lives in plain dicts guarded by a ``threading.Lock`` (never held across an ``await``), so
the store stays correct when Django runs sync code in worker threads with loops of their own
(``async_to_sync``). Payloads are kept as JSON text, as Redis keeps them. Expiry uses
``time.monotonic`` and is checked lazily on access (plus a sweep on writes, ``logs.LogTable``).

A listener that falls more than ``max_events`` behind its stream skips what was evicted before it
read it (as with Redis): the log is bounded, a reader's lag is not buffered elsewhere.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import threading
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from ...store_errors import StreamLagging, UnknownEvent
from ..events import Event, EventStore, make_event_id, parse_event_id, stored_event
from .claims import MemoryClaimStore
from .logs import LogTable


@dataclass(eq=False)
class _Waiter:
    """A listener's wake-up flag, set from whichever thread appends."""

    loop: asyncio.AbstractEventLoop
    event: asyncio.Event = field(default_factory=asyncio.Event)

    def wake(self) -> None:
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self.loop:
            self.event.set()
        else:
            try:
                self.loop.call_soon_threadsafe(self.event.set)
            except RuntimeError:  # the listener's loop is closed; it will never read again
                pass


class MemoryEventStore(EventStore):
    claims: MemoryClaimStore

    def __init__(self, *, max_events: int = 1000, ttl: float = 3600.0, **options: Any) -> None:
        super().__init__(max_events=max_events, ttl=ttl, **options)
        self._lock = threading.Lock()
        self._table = LogTable(max_events=max_events, ttl=ttl)
        self._waiters: dict[tuple[str, str], set[_Waiter]] = {}
        self.claims = MemoryClaimStore()
        # One counter for the whole store: a stream's ids keep increasing even if its log expired
        # and was recreated, so an old Last-Event-ID can never name a newer event.
        self._seq = itertools.count(1)

    async def append(self, session_id: str, stream_id: str, message: dict[str, Any]) -> str:
        return self._append(session_id, stream_id, json.dumps(message), None)

    async def append_many(self, session_id: str, stream_id: str, messages: list[dict[str, Any]]) -> list[str]:
        # One call, not a coroutine per message: a POST stream ends with its responses and the end
        # marker in one step (streams.py), on every always-stream request.
        return [self._append(session_id, stream_id, json.dumps(m), None) for m in messages]

    async def append_encoded(self, session_id: str, stream_id: str, payloads: list[bytes], *,
                             final: bool = False) -> list[str]:
        if final:
            ids = self._append_finished((session_id, stream_id), payloads)
            if ids is not None:
                return ids
        ids = [self._append(session_id, stream_id, p.decode(), None) for p in payloads]
        if final:
            self._finish((session_id, stream_id))
        return ids

    def _append_finished(self, key: tuple[str, str], payloads: list[bytes]) -> list[str] | None:
        """A whole stream in one step (an always-stream call answered at once: its first entry,
        response and end): stored straight as ``Finished``, no ``Log`` built. None if the
        stream already has a log or a listener (``append_encoded`` then appends as usual)."""
        now = time.monotonic()
        with self._lock:
            if len(payloads) > self.max_events or key in self._table or key in self._waiters:
                return None
            flat: list[Any] = [now, 0]
            ids = []
            for payload in payloads:
                seq = next(self._seq)
                flat += (seq, payload.decode(), now)
                ids.append(make_event_id(key[1], seq))
            self._table.keep_finished(key, tuple(flat), now)
        return ids

    def _finish(self, key: tuple[str, str]) -> None:
        """Keep a complete stream's log as ``Finished`` for the rest of its ttl. Every
        always-stream POST leaves one, thousands a second: as ``Log`` objects the cyclic
        collector walked each of them in every full collection
        (bench/results/2026-11-24-1700-sse-and-stateless-session11.md)."""
        with self._lock:
            if key not in self._waiters:
                self._table.finish(key, time.monotonic())

    def _append(self, session_id: str, stream_id: str, payload: str, tag: str | None) -> str:
        key = (session_id, stream_id)
        now = time.monotonic()
        with self._lock:
            log = self._table.get(key, now)
            if log is None:
                log = self._table.create(key, now)
            seq = next(self._seq)
            if len(log.entries) == self.max_events:
                log.evicted = log.entries[0][0]  # the append below pushes it out
            log.entries.append((seq, payload, now))
            log.touched = now
            if tag is not None:
                if log.tags is None:
                    log.tags = {}
                for old in [t for t, at in log.tags.items() if at + self.ttl <= now]:
                    del log.tags[old]
                log.tags[tag] = now
            waiters = self._waiters.get(key)
            # A POST stream's log has no listener unless it is being resumed: no copy then.
            woken = list(waiters) if waiters else ()
        for waiter in woken:
            waiter.wake()
        return make_event_id(stream_id, seq)

    async def broadcast(self, session_ids: list[str], stream_id: str, message: dict[str, Any],
                        *, tag: str | None = None) -> int:
        payload = json.dumps(message)
        for session_id in session_ids:
            self._append(session_id, stream_id, payload, tag)
        return len(session_ids)

    async def tagged(self, session_ids: list[str], stream_id: str, tag: str, within: float) -> set[str]:
        now = time.monotonic()
        with self._lock:
            found = set()
            for sid in session_ids:
                log = self._table.get((sid, stream_id), now)
                at = log.tags.get(tag) if log is not None and log.tags is not None else None
                if at is not None and at + within > now:
                    found.add(sid)
            return found

    def _start(self, key: tuple[str, str], after: str | None,
               waiter: _Waiter) -> tuple[list[tuple[int, str]], int]:
        """Validate ``after``, snapshot the replay and register the waiter in one locked step, so
        an append racing with the start is either in the snapshot or wakes the waiter. Also
        returns the position the listener starts from."""
        now = time.monotonic()
        with self._lock:
            log = self._table.get(key, now)
            entries = list(log.entries) if log is not None else []
            start = log.evicted if log is not None else 0
            if after is not None:
                stream_id, start = parse_event_id(after)
                if stream_id != key[1] or not any(s == start for s, _, _ in entries):
                    raise UnknownEvent(f"Event {after!r} is not retained")
                entries = [e for e in entries if e[0] > start]
            self._waiters.setdefault(key, set()).add(waiter)
            return [(s, p) for s, p, _ in entries], start

    def _since(self, key: tuple[str, str], last: int, waiter: _Waiter) -> list[tuple[int, str]]:
        with self._lock:
            log = self._table.get(key, time.monotonic())
            if log is not None and log.evicted > last:
                raise StreamLagging(f"A listener of {key[1]!r} fell behind the retained log")
            batch = [(s, p) for s, p, _ in log.entries if s > last] if log is not None else []
            if not batch:
                waiter.event.clear()  # under the lock: a later append's wake() is not lost
            return batch

    async def listen(self, session_id: str, stream_id: str, after: str | None = None) -> AsyncIterator[Event]:
        key = (session_id, stream_id)
        waiter = _Waiter(asyncio.get_running_loop())
        batch, last = self._start(key, after, waiter)
        try:
            while True:
                for seq, payload in batch:
                    last = seq
                    yield stored_event(make_event_id(stream_id, seq), payload)
                batch = self._since(key, last, waiter)
                if not batch:
                    await waiter.event.wait()
        finally:
            with self._lock:
                waiters = self._waiters.get(key)
                if waiters is not None:
                    waiters.discard(waiter)
                    if not waiters:
                        del self._waiters[key]

    async def delete_session(self, session_id: str) -> None:
        with self._lock:
            self._table.drop_session(session_id)
        self.claims.drop_stream(session_id)
