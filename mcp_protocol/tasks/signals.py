"""What workers tell each other about a task, over the bus (at most once, like everything on it:
the task store stays the truth, and polling reads it).

- ``tasks:<owner>``: stop the run of a task (``{"cancel": id}``), to the worker holding its
  lease (``cancel_everywhere``; that worker's next lease renewal is the backstop);
- ``tasks:handover``: a stopping worker released the lease of a task (``{"handover": id}``,
  ``drain.py``), for every worker: the first to claim it runs it at once (the sweeps of every
  worker are the backstop);
- ``task:<id>``: the task changed (``announce``), for the ``subscriptions/listen`` streams that
  follow it (SEP-2663 ``notifications/tasks``) on every worker.
"""

from __future__ import annotations

import contextlib
from typing import Protocol

from ..bus.base import Bus
from ..store_errors import StoreUnavailable
from ..stores.tasks import Principal, TaskRecord, TaskStore


class Runs(Protocol):
    """This worker's runner, as a cancel needs it: who it is in leases, and how it stops a run."""

    owner: str

    def stop(self, task_id: str) -> None: ...


HANDOVER = "tasks:handover"


def channel(owner: str) -> str:
    return f"tasks:{owner}"


def status_channel(task_id: str) -> str:
    """Where a task's transitions are announced, for the listen streams that asked for it."""
    return f"task:{task_id}"


async def announce(bus: Bus, task_id: str) -> None:
    """Tell every worker's listen streams the task changed (they read it and send it: SEP-2663
    ``notifications/tasks``). At most once, like everything on the bus: polling stays the truth."""
    with contextlib.suppress(StoreUnavailable):
        await bus.publish(status_channel(task_id), {"taskId": task_id})


async def cancel_everywhere(
    store: TaskStore, bus: Bus, task_id: str, principal: Principal, here: Runs | None = None
) -> TaskRecord | None:
    """Cancel the task (idempotent) and stop its run on the worker holding its lease: ``here``
    at once if that is this worker, else through that worker's bus channel (the operators' cancel
    has no runner: it always publishes). The record as found; None if unknown."""
    found = await store.cancel(task_id, principal)
    if found is not None and not found.terminal:
        await announce(bus, task_id)
    if found is not None and not found.terminal and found.owner is not None:
        if here is not None and found.owner == here.owner:
            here.stop(task_id)
        else:
            with contextlib.suppress(StoreUnavailable):  # the owner's next renewal stops it
                await bus.publish(channel(found.owner), {"cancel": task_id})
    return found
