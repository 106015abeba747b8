"""Coarse one-shot timers for the request path: one loop timer every ``STEP`` serves them all.

Every request arms an "if it is still running in ~0.1 s" check or two (``streams.py``: the cancel
watch and, always-stream, the stream watch; ``modern.py``: the disconnect watch) and nearly
always disarms it a millisecond later. A ``loop.call_later`` each costs a ``TimerHandle`` (a
context copy, a heap push, a cancelled entry left in the heap until its time): ~2 us of CPU per
timer measured alone, more in a request
(bench/results/2026-11-24-1700-sse-and-stateless-session11.md). Here arming is a dict insert into
the bucket of the tick it is due at, disarming a dict pop, and the wheel ticks only
while something is armed.

A callback runs between ``delay`` and ``delay + STEP`` seconds after it was armed (later still if
the loop is busy), never earlier: right for "worth watching once it has run this long", not for
deadlines (those keep ``call_later``).
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable

STEP = 0.05  # s

Bucket = dict[Callable[[], object], None]  # an ordered set of the callbacks due at one tick


class TimerWheel:
    """The coarse timers of one event loop (``Runtime.later``), which it ticks on once armed."""

    __slots__ = ("_buckets", "_handle", "_loop", "_tick")

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._tick = 0  # ticks so far; bucket n fires at tick n
        self._buckets: dict[int, Bucket] = {}
        self._handle: asyncio.TimerHandle | None = None

    def arm(self, delay: float, callback: Callable[[], object]) -> Bucket:
        """Run ``callback`` once, at least ``delay`` s from now; ``disarm`` with what it returns.
        A callback armed twice in one bucket runs once: bound methods of one object compare equal."""
        # Armed anywhere within the current tick's STEP: one tick more keeps it from firing early.
        due = self._tick + math.ceil(delay / STEP) + 1
        bucket = self._buckets.get(due)
        if bucket is None:
            bucket = self._buckets[due] = {}
        bucket[callback] = None
        if self._handle is None:
            self._loop = asyncio.get_running_loop()
            self._handle = self._loop.call_later(STEP, self._advance)
        return bucket

    @staticmethod
    def disarm(bucket: Bucket, callback: Callable[[], object]) -> None:
        bucket.pop(callback, None)

    def _advance(self) -> None:
        loop = self._loop
        assert loop is not None
        self._tick += 1
        bucket = self._buckets.pop(self._tick, None)
        # Rescheduled before the callbacks run, so one that arms again finds the wheel turning.
        self._handle = loop.call_later(STEP, self._advance) if self._buckets else None
        if not bucket:
            return
        for callback in list(bucket):
            try:
                callback()
            except Exception as exc:  # as the loop treats a failing call_later callback
                loop.call_exception_handler(
                    {"message": "coarse timer callback failed", "exception": exc})
