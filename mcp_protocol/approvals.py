"""Approval before a tool runs (issue 42 item 5): a per-tool policy the core applies to every call.

- ``none``: the call runs.
- ``confirm``: the user is asked first, by a form elicitation naming the tool and its arguments
  ([06+] client/elicitation.mdx; a requested schema of one boolean ``confirm``). The call runs only
  on ``action: "accept"`` with ``confirm: true``; decline, cancel, or accept without it end it with
  an ``isError`` result. A client that cannot answer a form (no ``elicitation`` capability, or one
  declaring modes without ``form``: 2025-11-25 "Capabilities") gets an ``isError`` result saying
  approval is required and could not be asked. The question goes through ``Context.elicit``, so
  it is a real request in a 2025 session, an input-required round in 2026-07-28 (``inputs.py``:
  the run is stopped at the question and re-run with the answer, so the tool never runs before
  it) and a task's input request in a task.
- ``staff``: the call waits for a decision of a member of staff in the approval queue, which the
  Django side implements (``ApprovalQueue``: the queue's rows, and how a decision taken on any
  worker reaches the one waiting). Approved → the call runs; denied or no decision within the
  timeout → ``isError``. In a task the wait is the task's run, so the client gets the task at once.
  In 2026-07-28 the approval is sealed in the requestState of the tool's own later questions
  (``STAFF_KEY``), so one call is one approval however many rounds it takes.

The policy reaches the core on the ``Tool`` definition (``Tool.approval``, not on the wire).
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .auth import principal as principals
from .context import Context
from .definitions import Tool
from .errors import ClientRequestError
from .session import SHOWN_PREFIX

NONE, CONFIRM, STAFF = "none", "confirm", "staff"
POLICIES = (NONE, CONFIRM, STAFF)
# The key of the confirmation in a 2026-07-28 round's inputRequests: its own, so the tool's own
# questions keep their default keys (elicitation-1, ...) whatever the policy.
CONFIRM_KEY = "mcpsite/approval"
# A staff approval already given, sealed in a 2026-07-28 round's requestState (bound to the caller,
# the tool and the arguments' digest: request_state.py), so a tool that asks its client questions
# after approval is not sent back to staff on each retry (each round re-runs the call from the
# start: inputs.py). Read only from what the server sealed, never from the client's inputResponses.
STAFF_KEY = "mcpsite/staff-approval"
APPROVED, DENIED, EXPIRED = "approved", "denied", "expired"
DEFAULT_TIMEOUT = 300.0


@dataclass(frozen=True, slots=True)
class ApprovalRequest:
    """What staff are shown and decide on."""

    tool: str
    arguments: Mapping[str, Any]
    principal: str  # the caller's label (a key prefix, issuer and subject, "anonymous")
    principal_id: str | None
    session: str  # the session id's first characters (the id is the client's credential)
    endpoint: str  # the virtual server's slug; empty for /mcp


class ApprovalQueue(ABC):
    """Staff approvals. ``decide`` files the request and returns once it is decided (``APPROVED``,
    ``DENIED``) or ``timeout`` seconds passed (``EXPIRED``: the request is then closed as expired,
    so no later decision can run a call nobody waits for). A decision taken on any worker must
    release the call waiting on this one."""

    @abstractmethod
    async def decide(self, request: ApprovalRequest, timeout: float) -> str: ...


@dataclass(frozen=True, slots=True)
class Approvals:
    """What the server needs to apply the policies: the staff queue (None: ``staff`` tools are
    refused, never run unapproved) and how long a call waits for staff."""

    queue: ApprovalQueue | None = None
    timeout: float = DEFAULT_TIMEOUT


def _refused(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": True}


def confirm_request(tool: Tool, arguments: Mapping[str, Any]) -> dict[str, Any]:
    """The form elicitation's params (no ``mode``: form is the default, and 2025-06-18 has none)."""
    shown = ", ".join(f"{k}={_short(v)}" for k, v in arguments.items()) or "no arguments"
    return {
        "message": f"Allow the tool {tool.name!r} to run with {shown}?",
        "requestedSchema": {
            "type": "object",
            "properties": {
                "confirm": {
                    "type": "boolean",
                    "title": f"Run {tool.name}",
                    "description": "Check to let this call run.",
                },
            },
            "required": ["confirm"],
        },
    }


def _short(value: Any, limit: int = 200) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def can_ask_form(capabilities: Mapping[str, Any]) -> bool:
    """2025-11-25 client/elicitation.mdx "Capabilities": ``{}`` means form mode; a client that
    lists modes supports the ones listed."""
    declared = capabilities.get("elicitation")
    if not isinstance(declared, dict):
        return False
    modes = {k for k in declared if k in ("form", "url")}
    return not modes or "form" in modes


async def gate(
    tool: Tool, arguments: Mapping[str, Any], ctx: Context, approvals: Approvals | None
) -> dict[str, Any] | None:
    """``None``: the call may run. Else the ``isError`` result that ends it."""
    policy = tool.approval
    if policy == CONFIRM:
        return await _confirm(tool, arguments, ctx)
    if policy == STAFF:
        return await _staff(tool, arguments, ctx, approvals)
    return None


async def _confirm(tool: Tool, arguments: Mapping[str, Any], ctx: Context) -> dict[str, Any] | None:
    if not can_ask_form(ctx.client_capabilities):
        return _refused(
            f"The tool {tool.name!r} needs the user's approval before it runs, and this client cannot "
            "be asked (it did not declare form elicitation): the call was not run."
        )
    try:
        answer = await ctx.elicit(confirm_request(tool, arguments), key=CONFIRM_KEY)
    except ClientRequestError as exc:
        return _refused(f"The tool {tool.name!r} was not run: approval could not be asked ({exc.message}).")
    content = answer.get("content")
    confirmed = isinstance(content, dict) and content.get("confirm") is True
    if answer.get("action") == "accept" and confirmed:
        return None
    how = "declined" if answer.get("action") == "decline" else "not confirmed"
    return _refused(f"The user {how} the call: the tool {tool.name!r} was not approved and did not run.")


async def _staff(
    tool: Tool, arguments: Mapping[str, Any], ctx: Context, approvals: Approvals | None
) -> dict[str, Any] | None:
    if approvals is None or approvals.queue is None:
        return _refused(f"The tool {tool.name!r} needs staff approval and this server has no approval queue.")
    inputs = ctx.inputs
    if inputs is not None:
        earlier = inputs.sealed.get(STAFF_KEY)
        if isinstance(earlier, dict) and earlier.get("decision") == APPROVED:
            inputs.consumed[STAFF_KEY] = earlier  # sealed again for the next round, if any
            return None
    who = principals.current()
    request = ApprovalRequest(
        tool=tool.name,
        arguments=dict(arguments),
        principal=who.label if who.id is not None else (ctx.principal or who.label),
        principal_id=who.id if who.id is not None else ctx.principal,
        session=ctx.session.id[:SHOWN_PREFIX] if not ctx.session.stateless else "",
        endpoint=ctx.session.endpoint,
    )
    decision = await approvals.queue.decide(request, approvals.timeout)
    if decision == APPROVED:
        if inputs is not None:
            inputs.consumed[STAFF_KEY] = {"decision": APPROVED}
        return None
    if decision == DENIED:
        return _refused(f"Staff denied the call: the tool {tool.name!r} was not approved and did not run.")
    return _refused(
        f"No staff decision within {approvals.timeout:g} s: the tool {tool.name!r} was not approved "
        "and did not run."
    )
