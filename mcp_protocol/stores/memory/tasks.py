"""``MemoryTaskStore``: the in-process task store (one process; the reference for Redis).

Records live in a dict under a ``threading.Lock`` (never held across an ``await``); every read
hands out a copy, so a caller changing it changes nothing stored. Expired tasks are dropped
when met.
"""

from __future__ import annotations

import copy
import threading
from typing import Any

from ...store_errors import CreateError, TaskLimitReached
from ..tasks import (
    CANCELLED,
    INPUT_REQUIRED,
    WORKING,
    Answered,
    Principal,
    TaskRecord,
    TaskStore,
    now_ms,
)


class MemoryTaskStore(TaskStore):
    def __init__(
        self,
        *,
        max_open_per_principal: int | None = None,
        max_finished_per_principal: int | None = None,
        **options: Any,
    ) -> None:
        super().__init__(
            max_open_per_principal=max_open_per_principal,
            max_finished_per_principal=max_finished_per_principal,
            **options,
        )
        self._lock = threading.Lock()
        self._tasks: dict[str, TaskRecord] = {}
        # Per principal, the ids of its finished tasks in the order they finished (oldest first).
        self._finished: dict[str | None, dict[str, None]] = {}

    def _live(self, task_id: str, principal: Principal = None, *, anyone: bool = False) -> TaskRecord | None:
        record = self._tasks.get(task_id)
        if record is None:
            return None
        if record.expired(now_ms()):
            del self._tasks[task_id]
            return None
        if not anyone and not record.visible_to(principal):
            return None
        return record

    def _bound_finished(self, record: TaskRecord) -> None:
        """``record`` just finished: drop its principal's oldest finished tasks past the bound
        (under the lock)."""
        cap = self.max_finished_per_principal
        if cap is None:
            return
        order = self._finished.setdefault(record.principal, {})
        order[record.task_id] = None
        for gone in [t for t in order if t not in self._tasks]:  # expired since
            del order[gone]
        while len(order) > cap:
            oldest = next(iter(order))
            del order[oldest], self._tasks[oldest]

    async def create(self, record: TaskRecord) -> None:
        with self._lock:
            if record.task_id in self._tasks:
                raise CreateError(f"Task {record.task_id!r} already exists")
            cap, now = self.max_open_per_principal, now_ms()
            if cap is not None:
                open_ = sum(
                    1
                    for r in self._tasks.values()
                    if r.principal == record.principal and not r.terminal and not r.expired(now)
                )
                if open_ >= cap:
                    raise TaskLimitReached("Too many unfinished tasks for this principal", cap)
            self._tasks[record.task_id] = copy.deepcopy(record)

    async def get(self, task_id: str, principal: Principal) -> TaskRecord | None:
        with self._lock:
            record = self._live(task_id, principal)
            return copy.deepcopy(record) if record is not None else None

    async def claim(self, task_id: str, owner: str, lease_ms: int) -> TaskRecord | None:
        with self._lock:
            record = self._live(task_id, anyone=True)
            if record is None or record.status != WORKING:
                return None
            if record.owner not in (None, owner) and record.lease_ms > now_ms():
                return None
            found = copy.deepcopy(record)
            record.owner, record.lease_ms = owner, lease_ms
            return found

    def _held(self, task_id: str, owner: str) -> TaskRecord | None:
        """The task's record while it is working under ``owner``'s lease (the lock held), else None."""
        record = self._live(task_id, anyone=True)
        if record is None or record.status != WORKING or record.owner != owner:
            return None
        return record

    async def renew(self, task_ids: list[str], owner: str, lease_ms: int) -> set[str]:
        renewed = set()
        with self._lock:
            for task_id in task_ids:
                record = self._held(task_id, owner)
                if record is not None:
                    record.lease_ms = lease_ms
                    renewed.add(task_id)
        return renewed

    async def release(self, task_id: str, owner: str) -> bool:
        with self._lock:
            record = self._held(task_id, owner)
            if record is None:
                return False
            record.owner, record.lease_ms = None, now_ms()
            return True

    async def park(
        self, task_id: str, owner: str, input_requests: dict[str, dict[str, Any]], message: str | None = None
    ) -> bool:
        with self._lock:
            record = self._held(task_id, owner)
            if record is None:
                return False
            record.status, record.status_message = INPUT_REQUIRED, message
            record.input_requests = copy.deepcopy(input_requests)
            record.owner, record.lease_ms, record.updated_ms = None, 0, now_ms()
            return True

    async def note(self, task_id: str, owner: str, message: str) -> bool:
        with self._lock:
            record = self._held(task_id, owner)
            if record is None:
                return False
            record.status_message, record.updated_ms = message, now_ms()
            return True

    async def answer(
        self, task_id: str, principal: Principal, responses: dict[str, dict[str, Any]]
    ) -> Answered:
        with self._lock:
            record = self._live(task_id, principal)
            if record is None:
                return Answered.UNKNOWN
            taken = [key for key in responses if key in record.input_requests]
            if record.status != INPUT_REQUIRED or not taken:
                return Answered.IGNORED
            for key in taken:
                record.answers[key] = copy.deepcopy(responses[key])
                del record.input_requests[key]
            record.updated_ms = now_ms()
            if record.input_requests:
                return Answered.PENDING
            record.status, record.status_message = WORKING, None
            record.owner, record.lease_ms = None, now_ms()
            return Answered.READY

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
        with self._lock:
            record = self._live(task_id, anyone=True)
            if record is None or record.terminal or record.owner != owner:
                return False
            record.status, record.status_message = status, message
            record.result, record.error = copy.deepcopy(result), copy.deepcopy(error)
            record.input_requests = {}
            record.owner, record.lease_ms, record.updated_ms = None, 0, now_ms()
            self._bound_finished(record)
            return True

    async def cancel(
        self, task_id: str, principal: Principal, message: str = "The task was cancelled by request."
    ) -> TaskRecord | None:
        with self._lock:
            record = self._live(task_id, principal)
            if record is None:
                return None
            found = copy.deepcopy(record)
            if not record.terminal:
                record.status, record.status_message = CANCELLED, message
                record.input_requests = {}
                record.owner, record.lease_ms, record.updated_ms = None, 0, now_ms()
                self._bound_finished(record)
            return found

    async def lapsed(self, limit: int = 100) -> list[str]:
        now = now_ms()
        with self._lock:
            # Every sweep also forgets the expired tasks nobody read since (memory stays bounded).
            for task_id in [t for t, record in self._tasks.items() if record.expired(now)]:
                del self._tasks[task_id]
            ids = [
                t for t, record in self._tasks.items() if record.status == WORKING and record.lease_ms <= now
            ]
        return ids[:limit]

    async def list_tasks(
        self, principal: Principal, offset: int = 0, limit: int = 50
    ) -> tuple[list[TaskRecord], int | None]:
        now = now_ms()
        with self._lock:
            mine = [r for r in self._tasks.values() if r.visible_to(principal) and not r.expired(now)]
            mine.sort(key=lambda r: (r.created_ms, r.task_id), reverse=True)
            page = [copy.deepcopy(r) for r in mine[offset : offset + limit]]
        more = offset + limit < len(mine)
        return page, (offset + limit if more else None)

    async def close(self) -> None:
        """Nothing to release: the records live in this process."""
