"""Approval before a tool runs (issue 42 item 5, ``mcp_protocol/approvals.py``), in the core alone:
``confirm`` in a 2025-11-25 session (a real elicitation request) and in 2026-07-28 (an
input-required round: the tool must not run before the answer), a client that cannot be asked,
and ``staff`` against an in-memory queue (approved, denied, expired, no queue)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mcp_protocol.approvals import (
    APPROVED,
    CONFIRM_KEY,
    DENIED,
    EXPIRED,
    STAFF_KEY,
    ApprovalQueue,
    ApprovalRequest,
    Approvals,
    can_ask_form,
)
from mcp_protocol.bus.memory import MemoryBus
from mcp_protocol.context import Context
from mcp_protocol.definitions import Tool
from mcp_protocol.jsonrpc import Request
from mcp_protocol.memory_provider import MemoryProvider
from mcp_protocol.stores.memory import MemoryTaskStore
from mcp_protocol.tasks.runner import TaskRunner
from tests.support.polling import within

from .conftest import RecordingOutbound, call, initialized, make_server, modern_meta
from .task_calls import rpc, terminal

runs: list[dict[str, Any]] = []


async def delete_invoice(args: dict[str, Any], ctx: Context) -> dict[str, Any]:
    runs.append(args)
    return {"content": [{"type": "text", "text": f"deleted {args.get('id')}"}]}


async def delete_after_asking(args: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """A staff tool with a question of its own, asked after approval (a 2026-07-28 round each)."""
    answer = await ctx.elicit({"message": "Reason?", "requestedSchema": {
        "type": "object", "properties": {"reason": {"type": "string"}}}})
    runs.append({**args, "reason": answer.get("content", {}).get("reason")})
    return {"content": [{"type": "text", "text": f"deleted {args.get('id')}"}]}


def tool(name: str, approval: str) -> Tool:
    schema = {"type": "object", "properties": {"id": {"type": "string"}}}
    return Tool(name=name, input_schema=schema, approval=approval)


class ScriptedQueue(ApprovalQueue):
    def __init__(self, decision: str) -> None:
        self.decision = decision
        self.asked: list[tuple[ApprovalRequest, float]] = []

    async def decide(self, request: ApprovalRequest, timeout: float) -> str:
        self.asked.append((request, timeout))
        return self.decision


def server_with(queue: ApprovalQueue | None = None):
    provider = MemoryProvider(
        tools=[
            (tool("confirmed", "confirm"), delete_invoice),
            (tool("staffed", "staff"), delete_invoice),
            (tool("free", "none"), delete_invoice),
            (tool("staffed_asking", "staff"), delete_after_asking),
        ]
    )
    return make_server(provider, approvals=Approvals(queue=queue, timeout=7.0))


@pytest.fixture(autouse=True)
def _clear_runs():
    runs.clear()


def answering(answer: dict[str, Any]):
    async def respond(method: str, params: Any) -> dict[str, Any]:
        return answer

    return respond


async def legacy_call(server, name: str, answer: dict[str, Any] | None, caps: dict[str, Any] | None = None):
    session = await initialized(server, capabilities={"elicitation": {}} if caps is None else caps)
    outbound = RecordingOutbound(answering(answer) if answer is not None else None)
    response = await call(
        server, session, "tools/call", {"name": name, "arguments": {"id": "INV-7"}}, outbound=outbound
    )
    return response["result"], outbound


async def test_confirm_accepted_in_a_2025_11_25_session_runs_the_tool_after_one_question() -> None:
    yes = {"action": "accept", "content": {"confirm": True}}
    result, outbound = await legacy_call(server_with(), "confirmed", yes)
    assert result == {"content": [{"type": "text", "text": "deleted INV-7"}]}
    [(method, params)] = outbound.requests
    assert method == "elicitation/create"
    assert "confirmed" in params["message"] and "INV-7" in params["message"]
    assert params["requestedSchema"]["properties"]["confirm"]["type"] == "boolean"
    assert params["requestedSchema"]["required"] == ["confirm"]
    assert runs == [{"id": "INV-7"}]


@pytest.mark.parametrize(
    "answer",
    [
        {"action": "decline"},
        {"action": "cancel"},
        {"action": "accept", "content": {"confirm": False}},
        {"action": "accept", "content": {}},
    ],
)
async def test_confirm_not_given_is_an_error_result_and_the_tool_does_not_run(answer) -> None:
    result, _ = await legacy_call(server_with(), "confirmed", answer)
    assert result["isError"] is True
    assert "not approved" in result["content"][0]["text"]
    assert runs == []


@pytest.mark.parametrize("caps", [{}, {"elicitation": {"url": {}}}])
async def test_a_client_that_cannot_answer_a_form_gets_an_error_saying_it_could_not_be_asked(caps) -> None:
    result, outbound = await legacy_call(server_with(), "confirmed", None, caps=caps)
    assert result["isError"] is True
    assert "cannot be asked" in result["content"][0]["text"]
    assert outbound.requests == [] and runs == []


def test_form_capability_reading_follows_2025_11_25() -> None:
    assert can_ask_form({"elicitation": {}})
    assert can_ask_form({"elicitation": {"form": {}, "url": {}}})
    assert not can_ask_form({"elicitation": {"url": {}}})
    assert not can_ask_form({})


async def modern(server, name: str, caps: dict[str, Any], id: int = 1, **extra: Any) -> dict[str, Any]:
    params = {
        "name": name,
        "arguments": {"id": "INV-7"},
        "_meta": modern_meta(**{"io.modelcontextprotocol/clientCapabilities": caps}),
        **extra,
    }
    response = await server.handle_stateless(Request(id, "tools/call", params), RecordingOutbound(), "alice")
    assert response is not None
    return response


async def test_confirm_in_2026_07_28_asks_first_and_runs_only_on_the_retry_with_the_answer() -> None:
    server = server_with()
    first = (await modern(server, "confirmed", {"elicitation": {}}))["result"]
    assert first["resultType"] == "input_required"
    assert list(first["inputRequests"]) == [CONFIRM_KEY]
    assert first["inputRequests"][CONFIRM_KEY]["method"] == "elicitation/create"
    assert runs == []  # nothing of the tool ran in the first round
    yes = {CONFIRM_KEY: {"action": "accept", "content": {"confirm": True}}}
    done = (
        await modern(
            server,
            "confirmed",
            {"elicitation": {}},
            id=2,
            inputResponses=yes,
            requestState=first["requestState"],
        )
    )["result"]
    assert done["content"][0]["text"] == "deleted INV-7"
    assert runs == [{"id": "INV-7"}]


async def test_confirm_declined_in_2026_07_28_is_an_error_result() -> None:
    server = server_with()
    first = (await modern(server, "confirmed", {"elicitation": {}}))["result"]
    no = {CONFIRM_KEY: {"action": "decline"}}
    done = (
        await modern(
            server,
            "confirmed",
            {"elicitation": {}},
            id=2,
            inputResponses=no,
            requestState=first["requestState"],
        )
    )["result"]
    assert done["isError"] is True and runs == []


async def test_confirm_in_2026_07_28_without_elicitation_is_an_error_result_not_a_question() -> None:
    result = (await modern(server_with(), "confirmed", {}))["result"]
    assert result["isError"] is True and "cannot be asked" in result["content"][0]["text"]
    assert runs == []


@pytest.mark.parametrize(("decision", "ran"), [(APPROVED, True), (DENIED, False), (EXPIRED, False)])
async def test_staff_decision_decides_whether_the_tool_runs(decision: str, ran: bool) -> None:
    queue = ScriptedQueue(decision)
    result, _ = await legacy_call(server_with(queue), "staffed", None)
    assert bool(runs) is ran
    assert result.get("isError", False) is not ran
    [(request, timeout)] = queue.asked
    assert (request.tool, dict(request.arguments), timeout) == ("staffed", {"id": "INV-7"}, 7.0)
    if decision == EXPIRED:
        assert "No staff decision within 7 s" in result["content"][0]["text"]


async def test_a_staff_tool_without_a_queue_is_refused_not_run() -> None:
    result, _ = await legacy_call(server_with(None), "staffed", None)
    assert result["isError"] is True and runs == []


async def test_a_tool_without_a_policy_asks_nothing() -> None:
    result, outbound = await legacy_call(server_with(ScriptedQueue(DENIED)), "free", None)
    assert result["content"][0]["text"] == "deleted INV-7" and outbound.requests == []


class GatedQueue(ApprovalQueue):
    """Holds each call until the test decides (a staff member on another worker, in production)."""

    def __init__(self) -> None:
        self.filed = asyncio.Event()
        self.decision: asyncio.Future[str] = asyncio.get_running_loop().create_future()

    async def decide(self, request: ApprovalRequest, timeout: float) -> str:
        self.filed.set()
        return await self.decision


@pytest.mark.parametrize(("decision", "ran"), [(APPROVED, True), (DENIED, False)])
async def test_a_staff_call_made_as_a_task_gives_the_client_the_task_at_once_and_waits_in_its_run(
    decision: str, ran: bool
) -> None:
    queue = GatedQueue()
    optional = {"taskSupport": "optional"}
    staffed = Tool(name="staffed", input_schema={"type": "object"}, approval="staff", execution=optional)
    provider = MemoryProvider(tools=[(staffed, delete_invoice)])
    server = make_server(provider, approvals=Approvals(queue=queue, timeout=7.0))
    runner = TaskRunner(MemoryTaskStore(), MemoryBus(), provider, lease=3.0, immediate=0.05)
    server.attach_tasks(runner)
    await runner.start()
    try:
        created = (await rpc(server, "tools/call", {"name": "staffed", "arguments": {"id": "T-1"}}))["result"]
        assert created["resultType"] == "task" and created["status"] == "working"
        await within(queue.filed.wait())
        assert runs == []  # waiting for staff: the tool has not run
        queue.decision.set_result(decision)
        task = await terminal(server, created["taskId"])
    finally:
        await runner.close()
    assert bool(runs) is ran
    assert task["result"].get("isError", False) is not ran


async def test_a_staff_tool_asking_its_own_question_in_2026_07_28_is_approved_once_for_every_round() -> None:
    queue = ScriptedQueue(APPROVED)
    server = server_with(queue)
    first = (await modern(server, "staffed_asking", {"elicitation": {}}))["result"]
    assert first["resultType"] == "input_required" and list(first["inputRequests"]) == ["elicitation-1"]
    assert len(queue.asked) == 1 and runs == []
    answer = {"elicitation-1": {"action": "accept", "content": {"reason": "duplicate"}}}
    done = (await modern(server, "staffed_asking", {"elicitation": {}}, id=2, inputResponses=answer,
                         requestState=first["requestState"]))["result"]
    assert done["content"][0]["text"] == "deleted INV-7"
    assert runs == [{"id": "INV-7", "reason": "duplicate"}]
    assert len(queue.asked) == 1  # the retry did not go back to staff


async def test_a_client_cannot_answer_the_staff_approval_itself() -> None:
    """The approval is trusted only from the server's sealed requestState: the same key in the
    client's inputResponses changes nothing, on a first call or on a retry carrying a state."""
    queue = ScriptedQueue(DENIED)
    server = server_with(queue)
    forged = {STAFF_KEY: {"decision": APPROVED}}
    result = (await modern(server, "staffed", {"elicitation": {}}, inputResponses=forged))["result"]
    assert result["isError"] is True and runs == [] and len(queue.asked) == 1
    confirm_first = (await modern(server, "confirmed", {"elicitation": {}}, id=2))["result"]
    # A real state of this server, for another tool: refused as another call's (-32602), not a pass.
    crossed = await modern(server, "staffed", {"elicitation": {}}, id=3, inputResponses=forged,
                           requestState=confirm_first["requestState"])
    assert crossed["error"]["code"] == -32602
    assert runs == [] and len(queue.asked) == 1
