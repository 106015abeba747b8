"""Tasks in-process (issue 26): which calls become tasks, in each era (SEP-2663; 2025-11-25
basic/utilities/tasks.mdx), the task methods' errors, a question mid-task answered through
tasks/update (2026-07-28) or asked on the tasks/result stream (2025-11-25), and a cancelled run
that stays cancelled. One ``Server`` with a ``TaskRunner`` over
the memory store and bus; across workers and Redis: tests/integration/test_tasks_workers.py."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from mcp_protocol.bus.memory import MemoryBus
from mcp_protocol.definitions import Tool
from mcp_protocol.errors import ClientRequestError
from mcp_protocol.inputs import refusal
from mcp_protocol.jsonrpc import Request
from mcp_protocol.memory_provider import MemoryProvider
from mcp_protocol.outbound import NullOutbound
from mcp_protocol.server import Server
from mcp_protocol.stores.memory import MemoryTaskStore
from mcp_protocol.tasks.runner import TaskRunner
from mcp_protocol.tasks.wire import EXTENSION, RELATED_TASK
from tests.support.polling import within

from .conftest import RecordingOutbound, call, initialized, make_server, modern_meta

TASKS = {"elicitation": {}, "extensions": {EXTENSION: {}}}
SCHEMA = {"type": "object", "properties": {}}


async def slow(args: dict[str, Any], ctx: Any) -> dict[str, Any]:
    await asyncio.sleep(float(args.get("seconds", 0.3)))
    return {"content": [{"type": "text", "text": "slow done"}]}


async def asks(args: dict[str, Any], ctx: Any) -> dict[str, Any]:
    await ctx.run_as_task()
    answer = await ctx.elicit({"message": "Sure?", "requestedSchema": SCHEMA}, key="sure")
    return {"content": [{"type": "text", "text": f"answered {answer['action']}"}]}


def tool(name: str, support: str) -> Tool:
    return Tool(name, {"type": "object"}, execution={"taskSupport": support})


@pytest.fixture
async def tasks_server() -> AsyncIterator[Server]:
    provider = MemoryProvider(
        tools=[
            (tool("opt", "optional"), slow),
            (tool("req", "required"), slow),
            (tool("never", "forbidden"), slow),
            (tool("asks", "optional"), asks),
        ]
    )
    server = make_server(provider)
    runner = TaskRunner(MemoryTaskStore(), MemoryBus(), provider, lease=3.0, immediate=0.05)
    server.attach_tasks(runner)
    await runner.start()
    yield server
    await runner.close()


async def modern(
    server: Server,
    method: str,
    params: dict[str, Any],
    caps: dict[str, Any] = TASKS,
    principal: str | None = "alice",
) -> dict[str, Any]:
    meta = modern_meta(**{"io.modelcontextprotocol/clientCapabilities": caps})
    response = await server.handle_stateless(
        Request(1, method, {**params, "_meta": meta}), NullOutbound(), principal
    )
    assert response is not None
    return response


async def until(server: Server, task_id: str, status: str) -> dict[str, Any]:
    async def poll() -> dict[str, Any]:
        while True:
            task: dict[str, Any] = (await modern(server, "tasks/get", {"taskId": task_id}))["result"]
            if task["status"] == status:
                return task
            await asyncio.sleep(0.02)

    return await within(poll(), 5.0)


async def test_the_extension_is_advertised_and_the_hint_served(tasks_server: Server) -> None:
    discovered = (await modern(tasks_server, "server/discover", {}))["result"]
    assert discovered["capabilities"]["extensions"] == {EXTENSION: {}}
    assert "tasks" not in discovered["capabilities"]
    legacy = await initialized(tasks_server, "2025-11-25")
    listed = (await call(tasks_server, legacy, "tools/list"))["result"]["tools"]
    assert {t["name"]: t["execution"]["taskSupport"] for t in listed}["req"] == "required"
    assert make_server().capabilities("2026-07-28").get("extensions") is None  # no runner: no tasks


async def test_a_declaring_client_gets_a_task_others_a_result_or_32021(tasks_server: Server) -> None:
    created = (await modern(tasks_server, "tools/call", {"name": "opt", "arguments": {}}))["result"]
    assert created["resultType"] == "task" and created["status"] == "working"
    assert set(created) >= {"taskId", "createdAt", "lastUpdatedAt", "ttlMs", "pollIntervalMs"}
    assert "result" not in created and "requestState" not in created
    plain = (await modern(tasks_server, "tools/call", {"name": "opt", "arguments": {}}, caps={}))["result"]
    assert plain["resultType"] == "complete" and plain["content"][0]["text"] == "slow done"
    refused = await modern(tasks_server, "tools/call", {"name": "req", "arguments": {}}, caps={})
    assert refused["error"]["code"] == -32021
    assert refused["error"]["data"] == {"requiredCapabilities": {"extensions": {EXTENSION: {}}}}
    never = (await modern(tasks_server, "tools/call", {"name": "never", "arguments": {}, "task": {}}))[
        "result"
    ]
    assert never["resultType"] == "complete"  # params.task is ignored in 2026-07-28
    quick = (await modern(tasks_server, "tools/call", {"name": "opt", "arguments": {"seconds": 0}}))["result"]
    assert quick["resultType"] == "complete"  # done within the immediate window
    done = await until(tasks_server, created["taskId"], "completed")
    assert done["result"]["content"][0]["text"] == "slow done"


async def test_another_principal_sees_an_unknown_task(tasks_server: Server) -> None:
    task_id = (await modern(tasks_server, "tools/call", {"name": "opt", "arguments": {}}))["result"]["taskId"]
    for method, extra in (("tasks/get", {}), ("tasks/cancel", {}), ("tasks/update", {"inputResponses": {}})):
        answer = await modern(tasks_server, method, {"taskId": task_id, **extra}, principal="mallory")
        assert answer["error"]["code"] == -32602, method
    assert (await modern(tasks_server, "tasks/result", {"taskId": task_id}))["error"]["code"] == -32601
    assert (await modern(tasks_server, "tasks/list", {}))["error"]["code"] == -32601


async def test_a_question_mid_task_is_answered_with_tasks_update(tasks_server: Server) -> None:
    task_id = (await modern(tasks_server, "tools/call", {"name": "asks", "arguments": {}}))["result"][
        "taskId"
    ]
    parked = await until(tasks_server, task_id, "input_required")
    assert parked["inputRequests"]["sure"]["method"] == "elicitation/create"
    ack = await modern(
        tasks_server,
        "tasks/update",
        {"taskId": task_id, "inputResponses": {"other": {"action": "accept"}, "sure": {"action": "decline"}}},
    )
    assert ack["result"] == {"resultType": "complete", "_meta": ack["result"]["_meta"]}
    done = await until(tasks_server, task_id, "completed")
    assert done["result"]["content"][0]["text"] == "answered decline"


async def test_a_cancelled_run_stops_and_stays_cancelled(tasks_server: Server) -> None:
    task_id = (await modern(tasks_server, "tools/call", {"name": "opt", "arguments": {"seconds": 0.5}}))[
        "result"
    ]["taskId"]
    assert tasks_server.tasks is not None and tasks_server.tasks.running == 1
    assert "error" not in await modern(tasks_server, "tasks/cancel", {"taskId": task_id})
    await asyncio.sleep(0.7)  # past the tool's own end: it must not have completed the task
    assert tasks_server.tasks.running == 0
    assert (await modern(tasks_server, "tasks/get", {"taskId": task_id}))["result"]["status"] == "cancelled"


async def test_2025_11_25_task_augmented_calls(tasks_server: Server) -> None:
    session = await initialized(tasks_server, "2025-11-25")
    init_caps = tasks_server.capabilities("2025-11-25")["tasks"]
    assert init_caps["requests"] == {"tools": {"call": {}}}
    created = (await call(tasks_server, session, "tools/call", {"name": "opt", "task": {"ttl": 5000}}))[
        "result"
    ]
    assert created["task"]["ttl"] == 5000 and created["task"]["status"] == "working"
    result = (await call(tasks_server, session, "tasks/result", {"taskId": created["task"]["taskId"]}))[
        "result"
    ]
    assert result["content"][0]["text"] == "slow done"
    forbidden = await call(tasks_server, session, "tools/call", {"name": "never", "task": {}})
    assert forbidden["error"]["code"] == -32601
    older = await initialized(tasks_server, "2025-06-18")
    assert (await call(tasks_server, older, "tools/call", {"name": "opt", "task": {}}))["error"][
        "code"
    ] == -32601


async def test_a_2025_11_25_tasks_question_is_asked_on_tasks_result_and_the_task_resumes(
    tasks_server: Server,
) -> None:
    session = await initialized(tasks_server, "2025-11-25", {"tasks": {}, "elicitation": {}})
    created = (await call(tasks_server, session, "tools/call", {"name": "asks", "task": {}}))["result"]
    task_id = created["task"]["taskId"]

    async def accept(method: str, params: dict[str, Any] | None) -> dict[str, Any]:
        return {"action": "accept", "content": {}}

    client = RecordingOutbound(accept)
    result = (await call(tasks_server, session, "tasks/result", {"taskId": task_id}, outbound=client))[
        "result"
    ]
    assert result["content"][0]["text"] == "answered accept"
    [(method, params)] = client.requests
    assert method == "elicitation/create" and params is not None
    assert params["_meta"] == {RELATED_TASK: {"taskId": task_id}}  # tasks.mdx: MUST
    assert params["message"] == "Sure?"


async def test_a_2025_11_25_tasks_question_refused_by_the_client_fails_the_tools_call_as_outside_a_task(
    tasks_server: Server,
) -> None:
    session = await initialized(tasks_server, "2025-11-25", {"tasks": {}, "elicitation": {}})
    created = (await call(tasks_server, session, "tools/call", {"name": "asks", "task": {}}))["result"]

    async def refuse(method: str, params: dict[str, Any] | None) -> dict[str, Any]:
        raise ClientRequestError("refused", {"code": -1, "message": "no"})

    outbound = RecordingOutbound(refuse)
    params = {"taskId": created["task"]["taskId"]}
    result = (await call(tasks_server, session, "tasks/result", params, outbound=outbound))["result"]
    assert result["isError"] is True and "elicitation/create" in result["content"][0]["text"]


async def test_a_2026_07_28_client_cannot_pass_a_refusal_as_an_answer(tasks_server: Server) -> None:
    task_id = (await modern(tasks_server, "tools/call", {"name": "asks", "arguments": {}}))["result"][
        "taskId"
    ]
    await until(tasks_server, task_id, "input_required")
    answers = {"sure": refusal({"code": -1, "message": "no"})}
    await modern(tasks_server, "tasks/update", {"taskId": task_id, "inputResponses": answers})
    failed = await until(tasks_server, task_id, "failed")
    assert failed["error"]["code"] == -32602  # not a valid elicitation/create result


async def test_a_revoked_principals_unfinished_tasks_are_cancelled(tasks_server: Server) -> None:
    call_params = {"name": "opt", "arguments": {"seconds": 5}}
    mine = (await modern(tasks_server, "tools/call", call_params))["result"]["taskId"]
    theirs = (await modern(tasks_server, "tools/call", call_params, principal="bob"))["result"]["taskId"]
    assert tasks_server.tasks is not None
    assert await tasks_server.tasks.cancel_all_of({"alice"}) == 1
    assert (await modern(tasks_server, "tasks/get", {"taskId": mine}))["result"]["status"] == "cancelled"
    bobs = await modern(tasks_server, "tasks/get", {"taskId": theirs}, principal="bob")
    assert bobs["result"]["status"] == "working"
    await modern(tasks_server, "tasks/cancel", {"taskId": theirs}, principal="bob")


async def test_a_caller_at_its_cap_of_unfinished_tasks_gets_32000() -> None:
    provider = MemoryProvider(tools=[(tool("opt", "optional"), slow)])
    server = make_server(provider)
    runner = TaskRunner(MemoryTaskStore(max_open_per_principal=1), MemoryBus(), provider, immediate=0.01)
    server.attach_tasks(runner)
    await runner.start()
    try:
        first = (await modern(server, "tools/call", {"name": "opt", "arguments": {"seconds": 5}}))["result"]
        refused = await modern(server, "tools/call", {"name": "opt", "arguments": {"seconds": 5}})
        assert refused["error"]["code"] == -32000 and refused["error"]["data"] == {"limit": 1}
        other = await modern(
            server, "tools/call", {"name": "opt", "arguments": {"seconds": 5}}, principal="bob"
        )
        assert other["result"]["resultType"] == "task"
        await modern(server, "tasks/cancel", {"taskId": first["taskId"]})
        again = await modern(server, "tools/call", {"name": "opt", "arguments": {"seconds": 5}})
        assert again["result"]["resultType"] == "task"
    finally:
        await runner.close()
