"""``TaskStore``: durable tasks (2026-07-28 extension ``io.modelcontextprotocol/tasks``, SEP-2663;
2025-11-25 basic/utilities/tasks.mdx), shared by every worker so that any of them answers
``tasks/get``, ``tasks/update`` and ``tasks/cancel`` for any task and a task outlives the worker
that ran it.

A task is one ``TaskRecord``: who created it (its principal: another principal is answered as
for an unknown id), the call it runs (``request``: enough to run it again from the start), its
status and timestamps, its final ``result`` or JSON-RPC ``error``, the input requests it waits
on and the answers it got, and the lease of the worker running it. The running worker holds a
lease it keeps renewing; a lease that lapses (its worker died) lets another worker ``claim`` the
task, to run it again (an idempotent tool) or to end it ``failed`` (any other).

Status lifecycle (2025-11-25 tasks.mdx "Task Status Lifecycle", the same in SEP-2663)::

    working ──► input_required ──► working ──► … ──► completed | failed | cancelled
        └────────────────────────────────────────────►┘       (terminal: never leaves)

Ids are unguessable (``new_task_id``: 192 random bits; SEP-2663 "Security Implications": task
ids MAY be bearer handles, so they MUST NOT be enumerable). A task lives ``ttl_ms`` from its
creation (``None``: no expiry); after that every read answers as for an unknown id.
"""

from __future__ import annotations

import enum
import secrets
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

from ..options import refuse_leftover

WORKING, INPUT_REQUIRED = "working", "input_required"
COMPLETED, FAILED, CANCELLED = "completed", "failed", "cancelled"
TERMINAL = frozenset({COMPLETED, FAILED, CANCELLED})
STATUSES = (WORKING, INPUT_REQUIRED, COMPLETED, FAILED, CANCELLED)


class AnyPrincipal:
    """Stands for every principal: the operators' listings and cancels (admin, REST API)."""


ANY_PRINCIPAL = AnyPrincipal()
Principal = str | None | AnyPrincipal


def new_task_id() -> str:
    return secrets.token_urlsafe(24)


def now_ms() -> int:
    return int(time.time() * 1000)


@dataclass(slots=True)
class TaskRecord:
    task_id: str
    principal: str | None
    tool: str
    request: dict[str, Any]  # the call, as the runner needs it to run it (again) from the start
    created_ms: int
    ttl_ms: int | None
    poll_interval_ms: int
    status: str = WORKING
    status_message: str | None = None
    updated_ms: int = 0
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    input_requests: dict[str, dict[str, Any]] = field(default_factory=dict)
    answers: dict[str, dict[str, Any]] = field(default_factory=dict)
    owner: str | None = None  # the worker holding the lease, if any
    lease_ms: int = 0  # when that lease lapses (epoch ms)

    def __post_init__(self) -> None:
        if not self.updated_ms:
            self.updated_ms = self.created_ms

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL

    def expired(self, at_ms: int) -> bool:
        return self.ttl_ms is not None and at_ms >= self.created_ms + self.ttl_ms

    def visible_to(self, principal: Principal) -> bool:
        return isinstance(principal, AnyPrincipal) or principal == self.principal


class Answered(enum.Enum):
    """What ``TaskStore.answer`` did."""

    UNKNOWN = "unknown"  # no such task for this principal
    IGNORED = "ignored"  # no answer matched an outstanding request (SEP-2663: ignore them)
    PENDING = "pending"  # answers taken; other requests are still outstanding
    READY = "ready"  # every outstanding request is answered: the task is working again, unleased


class TaskStore(ABC):
    """Task records shared by every worker of the backend.

    Guarantees: ``create`` returns once every worker's ``get`` finds the task (SEP-2663 "Task
    Creation": no ``CreateTaskResult`` before that); every transition is atomic and checked
    against the stored state, so a terminal task never changes again (a ``finish`` after a
    ``cancel`` is refused), only the lease holder parks or finishes a task, and of concurrent
    ``claim``s of one task exactly one wins; reads never return another principal's task, nor
    an expired one.
    """

    strict_options = True  # an option no class of the backend takes is refused (options.py)

    def __init__(
        self,
        *,
        max_open_per_principal: int | None = None,
        max_finished_per_principal: int | None = None,
        **options: Any,
    ) -> None:
        # How many unfinished (working, input_required) tasks one principal may have at once:
        # each holds a run's memory on a worker and a record in the store. None: no cap.
        refuse_leftover(self, options)
        self.max_open_per_principal = max_open_per_principal
        # How many finished (terminal) tasks, results included, one principal keeps before their
        # ttl ends (issue 37 item 7): the one that ends past it drops the oldest finished, in the
        # same atomic step; an unfinished task is never dropped. None: no bound but the ttl.
        self.max_finished_per_principal = max_finished_per_principal

    @abstractmethod
    async def create(self, record: TaskRecord) -> None:
        """Store a new task, durably (every worker's ``get`` finds it once this returns). Its
        ``owner``/``lease_ms``, if set, are the creating worker's lease. ``CreateError`` if the
        id exists; ``TaskLimitReached`` if its principal already has ``max_open_per_principal``
        unfinished, unexpired tasks (checked and counted in one step: concurrent creates on any
        workers never overshoot)."""

    @abstractmethod
    async def get(self, task_id: str, principal: Principal) -> TaskRecord | None:
        """The task, or None if unknown, expired or another principal's."""

    @abstractmethod
    async def claim(self, task_id: str, owner: str, lease_ms: int) -> TaskRecord | None:
        """Take the lease to run the task until ``lease_ms`` (epoch ms): only a ``working`` task
        whose lease is free, lapsed or already ``owner``'s. The record as found (with every
        answer so far; its ``owner``: the worker whose lease lapsed, None if it was free), or
        None if the task is not claimable."""

    @abstractmethod
    async def renew(self, task_ids: list[str], owner: str, lease_ms: int) -> set[str]:
        """Extend ``owner``'s leases on ``task_ids``; the ids renewed (a task finished,
        cancelled or claimed by another worker since is not among them: its run must stop)."""

    @abstractmethod
    async def release(self, task_id: str, owner: str) -> bool:
        """``owner`` gives up its lease on a ``working`` task (a stopping worker hands it over):
        the task is free and lapsed at once, so the next ``claim`` of any worker wins it and finds
        no owner (nobody's run died: it may start afresh). False if ``owner`` does not hold it."""

    @abstractmethod
    async def park(
        self, task_id: str, owner: str, input_requests: dict[str, dict[str, Any]], message: str | None = None
    ) -> bool:
        """The run asked the client: ``input_required`` with these outstanding requests, and
        the lease released (nothing runs until they are answered). False if ``owner`` no longer
        holds the task (cancelled, lapsed)."""

    @abstractmethod
    async def note(self, task_id: str, owner: str, message: str) -> bool:
        """The run says where it is: ``message`` becomes the ``working`` task's status message
        (2025-11-25 basic/utilities/tasks.mdx ``statusMessage``, "the current task state"), read by
        every worker's ``get``. Only the lease holder notes; False otherwise (finished, parked,
        cancelled, another worker's)."""

    @abstractmethod
    async def answer(
        self, task_id: str, principal: Principal, responses: dict[str, dict[str, Any]]
    ) -> Answered:
        """Record answers to outstanding requests (SEP-2663 ``tasks/update``). Keys not
        outstanding are ignored; answered keys leave ``input_requests``; once none is left the
        task is ``working`` again with no lease (``READY``: the caller claims and runs it)."""

    @abstractmethod
    async def finish(
        self,
        task_id: str,
        owner: str | None,
        status: str,
        *,
        result: dict[str, Any] | None = None,
        error: dict[str, Any] | None = None,
        message: str | None = None,
    ) -> bool:
        """End the task (``completed`` with ``result``, ``failed`` with ``error``). Only the
        lease holder (``owner``) finishes it; False if it is terminal already (a cancel won) or
        another worker holds it. Releases the lease. Past ``max_finished_per_principal`` the
        principal's oldest finished task is dropped (``cancel`` too)."""

    @abstractmethod
    async def cancel(
        self, task_id: str, principal: Principal, message: str = "The task was cancelled by request."
    ) -> TaskRecord | None:
        """Cancel the task unless it is terminal (idempotent). The record as it was before
        (its ``owner`` is the worker to stop), or None if unknown."""

    @abstractmethod
    async def lapsed(self, limit: int = 100) -> list[str]:
        """Ids of ``working`` tasks nobody runs: their lease lapsed (the worker died) or they
        were made ready by ``answer`` and nobody claimed them in time."""

    @abstractmethod
    async def list_tasks(
        self, principal: Principal, offset: int = 0, limit: int = 50
    ) -> tuple[list[TaskRecord], int | None]:
        """The principal's live tasks (every principal's for ``ANY_PRINCIPAL``), newest first,
        and the offset of the next page (None: the last page)."""

    @abstractmethod
    async def close(self) -> None:
        """Release connections."""
