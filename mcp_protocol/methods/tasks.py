"""The task methods, in each era, over one store (``stores/tasks.py``) and runner (``tasks/``).

2026-07-28, extension ``io.modelcontextprotocol/tasks`` (SEP-2663):

- every task method from a request that does not declare the extension → -32021 naming it
  ("Protocol Errors": MUST, checked before the task is looked up);
- ``tasks/get`` → the ``DetailedTask`` (result or error inlined); an unknown, expired or another
  principal's id → -32602 (MUST);
- ``tasks/update`` → answers to outstanding input requests (keys not outstanding are ignored,
  SHOULD); once none is left the task runs on (on this worker); an empty ack;
- ``tasks/cancel`` → cancelled unless terminal (idempotent), the run stopped wherever it runs;
  an empty ack. ``tasks/result`` and ``tasks/list`` do not exist in this era (-32601: the
  method table has no entry).

2025-11-25 (basic/utilities/tasks.mdx, SEP-1686): ``tasks/get`` (the task, no payload),
``tasks/result`` (blocks until terminal, then the call's result or its JSON-RPC error, with the
``related-task`` ``_meta``; meanwhile the questions of an ``input_required`` task are sent to
the client on its stream: ``tasks/relay.py``), ``tasks/list`` (the principal's tasks, paged), ``tasks/cancel``
(a terminal task → -32602; else cancelled, the task returned).

Authorization: a task is found only by its principal (the store's rule) through a credential
whose grant holds the task's tool (``tasks/reach.py``), on every method; anything else is
answered as an unknown id. Answers and cancels are checked before they are applied.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ..auth.principal import current
from ..errors import InvalidParams, MCPError, MethodNotFound
from ..inputs import parse_input_responses
from ..stores.tasks import INPUT_REQUIRED, Answered, TaskRecord
from ..tasks.reach import find, reachable
from ..tasks.relay import ask_client
from ..tasks.runner import TaskRunner
from ..tasks.wire import RELATED_TASK, declares_extension, missing_extension, task_to_wire
from .base import Call, require_str

NOT_FOUND = "Failed to retrieve task: Task not found"
RESULT_POLL = 0.25  # s: how often a blocked tasks/result looks again (any worker may finish it)


def _runner(call: Call) -> TaskRunner:
    runner = call.server.tasks
    if runner is None:
        raise MethodNotFound("Method not found: this server makes no tasks")
    if call.modern and not declares_extension(call.session.client_capabilities):
        raise missing_extension("the task methods")
    return runner


async def _found(call: Call, runner: TaskRunner) -> TaskRecord:
    task_id = require_str(call.params, "taskId")
    record = await find(runner.store, task_id, call.session.principal, current().grant, call.full_snapshot)
    if record is None:
        raise InvalidParams(NOT_FOUND)
    return record


async def get_task(call: Call) -> dict[str, Any]:
    runner = _runner(call)
    return task_to_wire(await _found(call, runner), modern=call.modern, detailed=True)


async def update_task(call: Call) -> dict[str, Any]:
    runner = _runner(call)
    responses = parse_input_responses(call.params)
    task_id = (await _found(call, runner)).task_id  # in reach before an answer resumes its run
    if await runner.answer(task_id, call.session.principal, responses) is Answered.UNKNOWN:
        raise InvalidParams(NOT_FOUND)
    return {}


async def cancel_task(call: Call) -> dict[str, Any]:
    runner = _runner(call)
    task_id = (await _found(call, runner)).task_id  # in reach before it is cancelled
    found = await runner.cancel(task_id, call.session.principal)
    if found is None:
        raise InvalidParams(NOT_FOUND)
    if call.modern:
        return {}
    if found.terminal:
        # 2025-11-25 tasks.mdx "Task Cancellation": MUST reject a terminal task with -32602.
        raise InvalidParams(f"Cannot cancel task: it is already {found.status}")
    return task_to_wire(await _found(call, runner), modern=False)


async def task_result(call: Call) -> dict[str, Any]:
    """2025-11-25 ``tasks/result``: blocks until the task is terminal (tasks.mdx "Result
    Retrieval"), then exactly what the call would have returned."""
    runner = _runner(call)
    record = await _found(call, runner)
    while not record.terminal:
        if record.status == INPUT_REQUIRED:
            # tasks.mdx "Input Required Status": the task's questions go out on this stream.
            await ask_client(runner, record, call.ctx.outbound, call.ctx.client_request_timeout)
        await asyncio.sleep(RESULT_POLL)
        record = await _found(call, runner)
    if record.error is not None:
        error = record.error
        raise MCPError(error.get("message"), error.get("data"), code=int(error.get("code", -32603)))
    if record.result is None:  # cancelled
        raise InvalidParams(f"Task {record.task_id} was {record.status}: it has no result")
    result = dict(record.result)
    result["_meta"] = {**(result.get("_meta") or {}), RELATED_TASK: {"taskId": record.task_id}}
    return result


async def list_tasks(call: Call) -> dict[str, Any]:
    runner = _runner(call)
    cursor = call.params.get("cursor")
    offset = 0
    if cursor is not None:
        if not isinstance(cursor, str) or not cursor.isdigit():
            raise InvalidParams("Invalid cursor")
        offset = int(cursor)
    page, following = await runner.store.list_tasks(call.session.principal, offset, 50)
    grant, snapshot = current().grant, call.full_snapshot
    # Out of reach is left out (a page may be shorter than 50; the cursor still goes on).
    shown = [r for r in page if reachable(r, grant, snapshot)]
    result: dict[str, Any] = {"tasks": [task_to_wire(r, modern=False) for r in shown]}
    if following is not None:
        result["nextCursor"] = str(following)
    return result
