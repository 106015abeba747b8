"""Which lapsed leases a sweep may take over: ``Sightings``.

A lease lapses when its worker stops renewing it: the worker died, or the store was away and
nobody could renew anything (a Redis outage longer than the lease). In the second case the worker
is alive, may hold its run's outcome waiting for the store (``outcome.py``), and renews its
leases within ``lease / 3`` once the store is back. A sweep that took every lapsed task at once
would race it, and for a tool that is not idempotent either fail a task whose result is about to
be stored or (an idempotent one) run it a second time (issue 38).

So a lapsed task is taken over only when this worker saw it lapsed on two sweeps at least
``window`` seconds apart with the store answering every sweep in between: long enough for a live
owner to renew (``window`` is more than the renewal period). A sweep that fails forgets every
sighting, so the time a store was away never counts towards a takeover.
"""

from __future__ import annotations


class Sightings:
    def __init__(self, window: float) -> None:
        self.window = window
        self._first: dict[str, float] = {}  # task id -> when a sweep first saw it lapsed

    def due(self, lapsed: list[str], now: float) -> list[str]:
        """Of the ids a sweep found lapsed at ``now``, those seen lapsed for ``window`` already;
        ids no longer lapsed are forgotten."""
        first = {task_id: self._first.get(task_id, now) for task_id in lapsed}
        self._first = first
        return [task_id for task_id, seen in first.items() if now - seen >= self.window]

    def forget(self, task_id: str | None = None) -> None:
        """A sweep failed (forget all: the store's absence is not a dead owner's), or a task was
        taken (forget it)."""
        if task_id is None:
            self._first.clear()
        else:
            self._first.pop(task_id, None)
