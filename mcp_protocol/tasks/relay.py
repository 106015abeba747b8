"""2025-11-25: a task's questions, asked on a ``tasks/result`` stream (basic/utilities/tasks.mdx
"Input Required Status", SEP-1686).

A tool run as a task asks the client as any tool does (``ctx.elicit`` …). Its run parks the
question as a 2026-07-28 task's does (``inputs.py``, replay): the task is stored
``input_required`` with its questions and the run stops. The requestor, seeing that status,
calls ``tasks/result`` (SHOULD) on any worker; that worker sends each outstanding question as a
server→client request on the ``tasks/result`` response stream, carrying the ``_meta``
``io.modelcontextprotocol/related-task`` (MUST), through the transport's ``Outbound``: the
client's reply is a new POST that may reach any worker, and comes back to this one through the
session's bus channel (``transports/pending.py``), as every server→client reply does. Each
answer is recorded in the store (``TaskRunner.answer``, the same step as 2026-07-28
``tasks/update``); the last one makes the task ``working`` again and this worker runs it from the
start with every answer so far.

A JSON-RPC error reply is recorded as a refusal (``inputs.refusal``): on replay the question
raises ``ClientRequestError`` in the tool, as the refused request does outside a task. No reply
in time (or a stream the client left): the question stays outstanding, and is asked again on the
next round of this ``tasks/result`` or on the next one the client sends.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ..errors import ClientRequestError
from ..inputs import refusal
from ..outbound import Outbound
from ..stores.tasks import TaskRecord
from .runner import TaskRunner
from .wire import RELATED_TASK


async def ask_client(runner: TaskRunner, record: TaskRecord, outbound: Outbound, timeout: float) -> None:
    """Ask every outstanding question of this ``input_required`` task, at once (a run asks
    several only when it asked them concurrently), recording each answer as it comes."""
    await asyncio.gather(
        *(
            _ask(runner, record, key, question, outbound, timeout)
            for key, question in record.input_requests.items()
        )
    )


async def _ask(
    runner: TaskRunner,
    record: TaskRecord,
    key: str,
    question: dict[str, Any],
    outbound: Outbound,
    timeout: float,
) -> None:
    params = dict(question.get("params") or {})
    # tasks.mdx "Associating Task-Related Messages": MUST carry the related task.
    params["_meta"] = {**(params.get("_meta") or {}), RELATED_TASK: {"taskId": record.task_id}}
    try:
        result = await outbound.request(str(question["method"]), params, timeout)
    except ClientRequestError as exc:
        if exc.error is None:
            return  # no reply: still outstanding
        result = refusal(exc.error)
    await runner.answer(record.task_id, record.principal, {key: result})
