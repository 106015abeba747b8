"""Who reaches a task: its principal, through a credential whose grant holds the task's tool.

A task is keyed by its principal (``TaskStore``): another principal finds nothing. But one
principal holds credentials of different reach: an OAuth user's tokens differ by scope
(``mcp:echo`` against ``mcp``), and a key's grant may be narrowed after it made a task. A task
carries its tool's output and takes answers that run the tool again, so it is reachable only by
a caller whose current grant would let it call that tool (issue 37 item 2): on every task method
(``tasks/get``, ``tasks/result``, ``tasks/list``, ``tasks/update``, ``tasks/cancel``) and for
``subscriptions/listen`` task notifications. A task out of reach is answered exactly as an
unknown id (SEP-2663 "Security Implications": no existence oracle), as ``auth/scopes.py`` does for
definitions. Answers are checked before they are recorded, so a resumed run is always one a
caller holding the tool asked for.

The tool's tags come from the whole snapshot (a grant may name tools by tag); a tool since
removed keeps its name only: a grant naming it, or granting every tool, still reaches the task.
"""

from __future__ import annotations

from ..auth.principal import Grant
from ..definitions import Snapshot
from ..stores.tasks import Principal, TaskRecord, TaskStore


def reachable(record: TaskRecord, grant: Grant, snapshot: Snapshot) -> bool:
    tool = snapshot.tool(record.tool)
    return grant.allows("tools", record.tool, tool.tags if tool is not None else ())


async def find(
    store: TaskStore, task_id: str, principal: Principal, grant: Grant, snapshot: Snapshot
) -> TaskRecord | None:
    """The task, or None if unknown, another principal's, or out of this grant's reach."""
    record = await store.get(task_id, principal)
    return record if record is not None and reachable(record, grant, snapshot) else None
