"""The memory event store's logs: every stream's retained events by (session, stream), live or
finished, indexed by session, and swept when their ttl runs out.

Nothing is thread-safe here: ``MemoryEventStore`` calls in under its lock. Why a module of its own:
the three ways a log leaves (its ttl ran out, its session ended, it was finished and then expired)
must each keep the session index right, and before the index ``delete_session`` walked every
stream of every session (every finished POST stream too, thousands a second under load) while
holding the store's lock; a live log nobody read again (a session that expired without a
DELETE) stayed until the process ended. Expiry is still checked on access too, so a log is never
served past its ttl between two sweeps.

Neither costs memory per log beyond what a session already had: the index holds a session's one
stream id itself (a set only from its second stream), and the sweep walks the live logs at most
every ``SWEEP_EVERY`` (a heap of due times cost 80 B a log, a set per session 216 B: at 10,000
idle GET streams that was 0.3 KB of each stream's ~19 KB,
bench/results/2026-11-24-2000-run_all-session12.md). A walk over 10,000 logs takes ~2 ms under
the store's lock, once a minute at most.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any

Key = tuple[str, str]  # (session id, stream id)
SWEEP_EVERY = 60.0  # seconds at most between two walks of the live logs (ttl / 8 if shorter)


@dataclass(slots=True)
class Log:
    """One stream's retained events: (seq, message JSON, monotonic append time).

    Every POST stream leaves one for ``ttl``, so it holds as few objects the garbage collector
    tracks as it can (no ``__dict__``; ``tags`` only once tagged): at a few thousand SSE requests a
    second, full collections walking these logs cost more than serving them
    (bench/results/2026-11-24-hot-path-issue16.md)."""

    entries: deque[tuple[int, str, float]]
    touched: float
    evicted: int = 0  # the newest seq evicted: a listener still before it would skip events
    tags: dict[str, float] | None = None  # broadcast tag -> monotonic append time


# A finished stream's log, kept apart from the live ones until it expires: one flat tuple
# (touched, evicted, seq, payload, appended at, seq, payload, ...) of atomic values, which the
# collector stops tracking at its first young collection. A finished log is read again only by a
# resume of its last events, which thaws it back into a ``Log``.
Finished = tuple[Any, ...]


class LogTable:
    def __init__(self, *, max_events: int, ttl: float) -> None:
        self.max_events, self.ttl = max_events, ttl
        self.live: dict[Key, Log] = {}
        self.finished: dict[Key, Finished] = {}
        # Session id -> its stream with a live or finished log, or a set of them once it has two.
        self._streams: dict[str, str | set[str]] = {}
        self._sweep_every = min(SWEEP_EVERY, ttl / 8)
        self._swept_at = float("-inf")
        self._finished_due: deque[tuple[float, Key]] = deque()  # finish order is expiry order

    def __contains__(self, key: Key) -> bool:
        return key in self.live or key in self.finished

    def get(self, key: Key, now: float) -> Log | None:
        """The stream's log with what outlived the ttl evicted, thawed if it was finished; None if
        it has none (or it expired)."""
        log = self.live.get(key)
        if log is None:
            finished = self.finished.pop(key, None)
            if finished is None:
                return None
            entries = zip(finished[2::3], finished[3::3], finished[4::3], strict=True)
            log = self.live[key] = Log(deque(entries, maxlen=self.max_events), *finished[:2])
        if log.touched + self.ttl <= now:
            del self.live[key]
            self._unindex(key)
            return None
        while log.entries and log.entries[0][2] + self.ttl <= now:
            log.evicted = log.entries.popleft()[0]  # older than ttl: evicted
        return log

    def create(self, key: Key, now: float) -> Log:
        self._sweep_live(now)
        log = self.live[key] = Log(deque(maxlen=self.max_events), now)
        self._index(key)
        return log

    def finish(self, key: Key, now: float) -> None:
        """Keep a live log without tags as ``Finished`` for the rest of its ttl (the caller checks
        that nobody listens to it)."""
        log = self.live.get(key)
        if log is not None and log.tags is None:
            del self.live[key]
            flat: list[Any] = [log.touched, log.evicted]
            for entry in log.entries:
                flat.extend(entry)
            self.keep_finished(key, tuple(flat), now)

    def keep_finished(self, key: Key, finished: Finished, now: float) -> None:
        """Keep ``finished``, and drop the finished logs whose ttl ran out (nothing else would: a
        finished log is not read again unless resumed)."""
        self.finished[key] = finished
        self._index(key)
        order = self._finished_due
        order.append((finished[0], key))
        while order[0][0] + self.ttl <= now:
            touched, old = order.popleft()
            kept = self.finished.get(old)
            if kept is not None and kept[0] == touched:  # not thawed and finished again since
                del self.finished[old]
                self._unindex(old)

    def drop_session(self, session_id: str) -> None:
        """Every log of the session; the finished logs' sweep skips what it left in its queue."""
        streams = self._streams.pop(session_id, None)
        for stream_id in (streams,) if isinstance(streams, str) else streams or ():
            self.live.pop((session_id, stream_id), None)
            self.finished.pop((session_id, stream_id), None)

    def _sweep_live(self, now: float) -> None:
        """Drop the live logs idle for the ttl, walking them all at most every ``_sweep_every``."""
        if now - self._swept_at < self._sweep_every:
            return
        self._swept_at = now
        for key in [k for k, log in self.live.items() if log.touched + self.ttl <= now]:
            del self.live[key]
            self._unindex(key)

    def _index(self, key: Key) -> None:
        session_id, stream_id = key
        streams = self._streams.get(session_id)
        if streams is None:
            self._streams[session_id] = stream_id
        elif isinstance(streams, str):
            if streams != stream_id:
                self._streams[session_id] = {streams, stream_id}
        else:
            streams.add(stream_id)

    def _unindex(self, key: Key) -> None:
        if key in self:
            return
        session_id, stream_id = key
        streams = self._streams.get(session_id)
        if streams == stream_id:
            del self._streams[session_id]
        elif isinstance(streams, set):
            streams.discard(stream_id)
            if not streams:
                del self._streams[session_id]
