"""``RedisTaskStore``: the tasks every worker shares. Values are JSON, never pickle.

Keys (``P`` = the ``prefix`` option), all under the one hash tag ``{P:tasks}``::

    {P:tasks}:t:<id>         hash: principal, tool, request, created, ttl, poll, status, message,
                             updated, result, error, owner, lease (JSON or plain strings)
    {P:tasks}:in:<id>        hash: outstanding input request key -> its request (JSON)
    {P:tasks}:ans:<id>       hash: answered key -> the client's answer (JSON)
    {P:tasks}:running        zset id -> lease end (ms) of every ``working`` task: ``lapsed`` reads it
    {P:tasks}:all            zset id -> created (ms): the operators' listing
    {P:tasks}:by:<principal> zset id -> created (ms): one principal's listing (2025-11-25 tasks/list)
    {P:tasks}:open:<principal> zset id -> expiry (ms) of its unfinished tasks: the cap's count
    {P:tasks}:done:<principal> zset id -> finishing order of its finished tasks: the bound on
                             them (``max_finished_per_principal``: the lowest go first)
    {P:tasks}:seq            counter: the finishing order

One hash tag, so every transition is one Lua script over the task, its inputs and the indexes,
atomic on one server, on Redis Cluster (one slot: tasks are served by one master, a trade for
atomic transitions without cross-slot protocols; tasks are few and long next to requests) and
through Sentinel. The scripts never decode JSON (Lua's cjson turns ``[]`` into ``{}``): results,
errors and requests pass through as strings, and a task's inputs are hash fields. A task's keys
expire at ``created + ttl`` (``PEXPIREAT``); the indexes are hints, their entries for vanished
tasks dropped when met. ``create`` is a write on the master: the next ``get`` on any worker (all
read the master) finds it, which is SEP-2663's "durably created"; what survives a Redis restart
is what its persistence settings (AOF/RDB) keep.
"""

from __future__ import annotations

import json
from typing import Any

from redis.commands.core import AsyncScript

from ...redis_client.connection import RedisConnector, unavailable_as_store_error
from ...redis_client.options import RedisOptions
from ...redis_client.topology import check_prefix
from ...store_errors import CreateError, TaskLimitReached
from ..tasks import Answered, AnyPrincipal, Principal, TaskRecord, TaskStore, now_ms
from .task_scripts import ANSWER, CLAIM, CREATE, FINISH, NOTE, PARK, READ, RELEASE, RENEW

RENEW_BATCH = 500
NEVER = 2**53  # the open-set score of a task that never expires


def _json_or_none(text: str | None) -> Any:
    return json.loads(text) if text else None


def _pairs(flat: list[str]) -> dict[str, str]:
    return dict(zip(flat[::2], flat[1::2], strict=True))


def _record(
    task_id: str, fields: dict[str, str], inputs: dict[str, str], answers: dict[str, str]
) -> TaskRecord:
    return TaskRecord(
        task_id=task_id,
        principal=json.loads(fields["principal"]),
        tool=fields["tool"],
        request=json.loads(fields["request"]),
        created_ms=int(fields["created"]),
        ttl_ms=int(fields["ttl"]) if fields.get("ttl") else None,
        poll_interval_ms=int(fields["poll"]),
        status=fields["status"],
        status_message=fields.get("message") or None,
        updated_ms=int(fields["updated"]),
        result=_json_or_none(fields.get("result")),
        error=_json_or_none(fields.get("error")),
        input_requests={k: json.loads(v) for k, v in inputs.items()},
        answers={k: json.loads(v) for k, v in answers.items()},
        owner=fields.get("owner") or None,
        lease_ms=int(fields.get("lease") or 0),
    )


class RedisTaskStore(TaskStore):
    def __init__(
        self,
        *,
        max_open_per_principal: int | None = None,
        max_finished_per_principal: int | None = None,
        prefix: str = "mcp",
        redis: RedisOptions | None = None,
        **options: Any,
    ) -> None:
        connection = RedisOptions.take(redis, options)  # flat connection keys too (url=, ...)
        super().__init__(
            max_open_per_principal=max_open_per_principal,
            max_finished_per_principal=max_finished_per_principal,
            **options,
        )
        self.prefix = check_prefix(prefix)
        self._redis = RedisConnector(connection)
        tag = f"{{{self.prefix}:tasks}}"
        self._tag = tag
        self._running, self._all, self._seq = f"{tag}:running", f"{tag}:all", f"{tag}:seq"
        self._scripts: dict[str, AsyncScript] = {}

    def _keys(self, task_id: str) -> tuple[str, str, str]:
        return f"{self._tag}:t:{task_id}", f"{self._tag}:in:{task_id}", f"{self._tag}:ans:{task_id}"

    def _by(self, principal: str | None) -> str:
        return f"{self._tag}:by:{json.dumps(principal)}"

    def _open(self, principal: str | None) -> str:
        return f"{self._tag}:open:{json.dumps(principal)}"

    def _finish_keys(self, task_id: str, principal: str | None) -> tuple[list[str], list[Any]]:
        """The keys of ``FINISH`` and its ARGV[5:7] (the bound and the key prefix)."""
        task, inputs, _ = self._keys(task_id)
        done = f"{self._tag}:done:{json.dumps(principal)}"
        keys = [task, self._running, inputs, self._open(principal), done, self._seq, self._all]
        keys.append(self._by(principal))
        cap = -1 if self.max_finished_per_principal is None else self.max_finished_per_principal
        return keys, [cap, f"{self._tag}:"]

    async def _run(self, source: str, keys: list[str], args: list[Any]) -> Any:
        client = await self._redis.ready_client()
        script = self._scripts.get(source)
        if script is None:
            script = self._scripts[source] = client.register_script(source)
        with unavailable_as_store_error():
            return await script(keys=keys, args=args, client=client)

    async def create(self, record: TaskRecord) -> None:
        task, _, _ = self._keys(record.task_id)
        expire_at = 0 if record.ttl_ms is None else record.created_ms + record.ttl_ms
        fields = {
            "principal": json.dumps(record.principal),
            "tool": record.tool,
            "request": json.dumps(record.request),
            "created": record.created_ms,
            "ttl": "" if record.ttl_ms is None else record.ttl_ms,
            "poll": record.poll_interval_ms,
            "status": record.status,
            "message": record.status_message or "",
            "updated": record.updated_ms,
            "owner": record.owner or "",
            "lease": record.lease_ms,
        }
        flat = [item for pair in fields.items() for item in pair]
        cap = -1 if self.max_open_per_principal is None else self.max_open_per_principal
        open_until = expire_at or NEVER
        created = await self._run(
            CREATE,
            [task, self._running, self._all, self._by(record.principal), self._open(record.principal)],
            [record.task_id, record.created_ms, expire_at, record.lease_ms, cap, now_ms(), open_until, *flat],
        )
        if created == -1:
            raise TaskLimitReached("Too many unfinished tasks for this principal", cap)
        if not created:
            raise CreateError(f"Task {record.task_id!r} already exists")
        if record.answers:  # answered in the MRTR rounds before the task: replayed by every run
            client = await self._redis.ready_client()
            answers = self._keys(record.task_id)[2]
            with unavailable_as_store_error():
                await client.hset(answers, mapping={k: json.dumps(v) for k, v in record.answers.items()})
                if expire_at:
                    await client.pexpireat(answers, expire_at)

    async def _read(self, task_id: str) -> TaskRecord | None:
        parts = await self._run(READ, list(self._keys(task_id)), [])
        fields, asked, answered = (_pairs(part) for part in parts)
        if not fields.get("status"):
            return None
        record = _record(task_id, fields, asked, answered)
        return None if record.expired(now_ms()) else record

    async def get(self, task_id: str, principal: Principal) -> TaskRecord | None:
        record = await self._read(task_id)
        return record if record is not None and record.visible_to(principal) else None

    async def claim(self, task_id: str, owner: str, lease_ms: int) -> TaskRecord | None:
        task, _, answers = self._keys(task_id)
        found = await self._run(CLAIM, [task, self._running, answers], [task_id, owner, now_ms(), lease_ms])
        if not found:
            return None
        return _record(task_id, _pairs(found[0]), {}, _pairs(found[1]))

    async def renew(self, task_ids: list[str], owner: str, lease_ms: int) -> set[str]:
        renewed: set[str] = set()
        for start in range(0, len(task_ids), RENEW_BATCH):
            batch = task_ids[start : start + RENEW_BATCH]
            keys = [self._running, *(self._keys(task_id)[0] for task_id in batch)]
            renewed.update(str(i) for i in await self._run(RENEW, keys, [owner, lease_ms, *batch]))
        return renewed

    async def release(self, task_id: str, owner: str) -> bool:
        task = self._keys(task_id)[0]
        return bool(await self._run(RELEASE, [task, self._running], [task_id, owner, now_ms()]))

    async def park(
        self, task_id: str, owner: str, input_requests: dict[str, dict[str, Any]], message: str | None = None
    ) -> bool:
        task, inputs, _ = self._keys(task_id)
        flat = [item for key, request in input_requests.items() for item in (key, json.dumps(request))]
        return bool(
            await self._run(
                PARK, [task, self._running, inputs], [task_id, owner, now_ms(), message or "", *flat]
            )
        )

    async def note(self, task_id: str, owner: str, message: str) -> bool:
        task = self._keys(task_id)[0]
        return bool(await self._run(NOTE, [task], [owner, message, now_ms()]))

    async def answer(
        self, task_id: str, principal: Principal, responses: dict[str, dict[str, Any]]
    ) -> Answered:
        if await self.get(task_id, principal) is None:
            return Answered.UNKNOWN
        task, inputs, answers = self._keys(task_id)
        flat = [item for key, answer in responses.items() for item in (key, json.dumps(answer))]
        outcome = await self._run(ANSWER, [task, self._running, inputs, answers], [task_id, now_ms(), *flat])
        return Answered(outcome)

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
        task = self._keys(task_id)[0]
        client = await self._redis.ready_client()
        with unavailable_as_store_error():
            principal = await client.hget(task, "principal")
        if principal is None:
            return False
        extra = [
            "message",
            message or "",
            "result",
            json.dumps(result) if result is not None else "",
            "error",
            json.dumps(error) if error is not None else "",
        ]
        keys, bound = self._finish_keys(task_id, json.loads(principal))
        return bool(await self._run(FINISH, keys, [task_id, owner or "", now_ms(), status, *bound, *extra]))

    async def cancel(
        self, task_id: str, principal: Principal, message: str = "The task was cancelled by request."
    ) -> TaskRecord | None:
        found = await self.get(task_id, principal)
        if found is None or found.terminal:
            return found
        # The holder's identity does not matter to a cancel: finish on whoever holds it.
        keys, bound = self._finish_keys(task_id, found.principal)
        await self._run(
            FINISH, keys, [task_id, found.owner or "", now_ms(), "cancelled", *bound, "message", message]
        )
        again = await self._read(task_id)
        if again is not None and again.status not in ("cancelled",) and not again.terminal:
            # The owner changed between our read and the write (a claim, a park): cancel again.
            return await self.cancel(task_id, principal, message)
        return found

    async def lapsed(self, limit: int = 100) -> list[str]:
        client = await self._redis.ready_client()
        with unavailable_as_store_error():
            due = await client.zrangebyscore(self._running, "-inf", now_ms(), start=0, num=limit)
        ids = [str(i) for i in due]
        live = []
        for task_id in ids:
            record = await self._read(task_id)
            if record is None or record.status != "working":
                with unavailable_as_store_error():
                    await client.zrem(self._running, task_id)  # a vanished task: drop its hint
            else:
                live.append(task_id)
        return live

    async def list_tasks(
        self, principal: Principal, offset: int = 0, limit: int = 50
    ) -> tuple[list[TaskRecord], int | None]:
        index = self._all if isinstance(principal, AnyPrincipal) else self._by(principal)
        client = await self._redis.ready_client()
        page: list[TaskRecord] = []
        position = offset
        while len(page) < limit:
            with unavailable_as_store_error():
                ids = [str(i) for i in await client.zrevrange(index, position, position + limit - 1)]
            if not ids:
                return page, None
            for task_id in ids:
                position += 1
                record = await self._read(task_id)
                if record is None:
                    with unavailable_as_store_error():
                        await client.zrem(index, task_id)
                    position -= 1  # the index shifted under us
                elif record.visible_to(principal):
                    page.append(record)
                    if len(page) == limit:
                        break
        with unavailable_as_store_error():
            more = await client.zcard(index) > position
        return page, (position if more else None)

    async def close(self) -> None:
        await self._redis.close()
