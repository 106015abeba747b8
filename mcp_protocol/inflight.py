"""The requests a worker is running, by (scope, request id): what cancellation and stopping reach.

The handler runs in the caller's task, not a task of its own (one loop turn and a Task less per
request: bench/results/2026-11-24-hot-path-issue16.md). To stop it, ``cancel``, ``stop_all`` and an MRTR
question cancel that task, and the frame that runs the handler takes the cancellation back
(``take_back``, with ``Task.uncancel`` as ``asyncio.timeout`` does), so the caller carries on and
answers. A cancellation from outside (the client left, the worker is torn down) is not ours and
propagates.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from . import jsonrpc
from .context import Context
from .inputs import InputRound

Key = tuple[str, jsonrpc.RequestId]  # (session id, or the connection a modern request came on; id)


@dataclass(slots=True)
class Running:
    task: asyncio.Task[Any]  # the task the handler runs in (the transport's)
    ctx: Context
    cancellable: bool = True
    base: int = 0  # the task's pending cancellations when the handler started
    cancelled_by_client: bool = False
    stopped: bool = False  # the worker is stopping and gave up on it (``stop_all``)
    taken_back: bool = False


def take_back(task: asyncio.Task[Any], entry: Running, mrtr: InputRound | None) -> bool:
    """Withdraw the cancellations this module asked of ``task`` for ``entry`` (each asks at most
    once: ``cancel``/``stop_all`` one between them, an MRTR question one); True when no other
    cancellation is pending, i.e. the one being raised was ours."""
    if entry.taken_back:
        return False
    entry.taken_back = True
    ours = int(entry.cancelled_by_client or entry.stopped) + int(mrtr is not None and mrtr.parked)
    for _ in range(ours):
        task.uncancel()
    return ours > 0 and task.cancelling() <= entry.base


class InFlight:
    def __init__(self) -> None:
        self._entries: dict[Key, Running] = {}

    def __contains__(self, key: Key) -> bool:
        return key in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def enter(self, key: Key, task: asyncio.Task[Any], ctx: Context, cancellable: bool) -> Running:
        # Tracked even when not cancellable, so the id counts as in use until answered.
        entry = self._entries[key] = Running(task, ctx, cancellable, base=task.cancelling())
        return entry

    def leave(self, key: Key, entry: Running) -> None:
        if self._entries.get(key) is entry:
            del self._entries[key]

    def cancel(self, key: Key) -> bool:
        """Stop an in-flight request (notifications/cancelled); ``False`` if unknown or finished."""
        entry = self._entries.get(key)
        if entry is None or entry.task.done() or not entry.cancellable or entry.cancelled_by_client:
            return False
        if entry.stopped:
            entry.cancelled_by_client = True  # already being stopped: one cancellation is enough
            return True
        entry.cancelled_by_client = True
        entry.ctx.cancel_event.set()
        entry.task.cancel()
        return True

    def cancel_scope(self, scope: str) -> int:
        """Stop every request of a scope (a session that ended): nobody will read their answers."""
        return sum(self.cancel(key) for key in list(self._entries) if key[0] == scope)

    def running(self) -> list[asyncio.Task[Any]]:
        return [entry.task for entry in self._entries.values() if not entry.task.done()]

    def stop_all(self) -> int:
        """End every request still running, answered with ``WorkerStopped``; how many."""
        stopped = 0
        for entry in list(self._entries.values()):
            if not entry.task.done() and entry.cancellable and not entry.cancelled_by_client \
                    and not entry.stopped:
                entry.stopped = True
                entry.ctx.cancel_event.set()
                entry.task.cancel()
                stopped += 1
        return stopped
