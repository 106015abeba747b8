"""Input-required results by replay (2026-07-28 basic/patterns/mrtr.mdx; checklist G 41).

One handler, both eras: in a legacy session its questions are server→client requests; in a modern
request they come back as ``inputRequests``, and the retry (``inputResponses`` + the sealed
``requestState``) re-runs it with the answers.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mcp_protocol.context import Context
from mcp_protocol.definitions import Tool
from mcp_protocol.jsonrpc import Request
from mcp_protocol.memory_provider import MemoryProvider
from mcp_protocol.request_state import Binding, RequestStateSealer

from .conftest import RecordingOutbound, call, initialized, make_server, modern_meta

ELICIT = {
    "message": "Name?",
    "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
}
SAMPLE = {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}], "maxTokens": 5}
ALL_CAPS = {"elicitation": {}, "sampling": {}, "roots": {}}
runs: list[str] = []


async def interview(args: dict[str, Any], ctx: Context) -> dict[str, Any]:
    runs.append("run")
    name = await ctx.elicit(ELICIT, key="name")
    color = await ctx.elicit({**ELICIT, "message": "Color?"}, key="color")
    return {"content": [{"type": "text", "text": f"{name['content']['name']} likes {color['content']['c']}"}]}


async def fan_out(args: dict[str, Any], ctx: Context) -> dict[str, Any]:
    name, reply, roots = await asyncio.gather(ctx.elicit(ELICIT), ctx.sample(SAMPLE), ctx.list_roots())
    return {"content": [{"type": "text", "text": f"{name['action']} {reply['role']} {len(roots['roots'])}"}]}


def tool(name: str) -> Tool:
    return Tool(name=name, input_schema={"type": "object"}, description=name)


@pytest.fixture
def server():
    provider = MemoryProvider(tools=[(tool("interview"), interview), (tool("fan_out"), fan_out)])
    return make_server(provider)


async def modern_call(server, name, *, caps=ALL_CAPS, id=1, principal="alice", arguments=None, **extra):
    params = {
        "name": name,
        "arguments": arguments or {},
        "_meta": modern_meta(**{"io.modelcontextprotocol/clientCapabilities": caps}),
    }
    params.update(extra)
    response = await server.handle_stateless(
        Request(id, "tools/call", params), RecordingOutbound(), principal
    )
    assert response is not None and response["id"] == id
    return response


def accept(**content: Any) -> dict[str, Any]:
    return {"action": "accept", "content": content}


async def test_multi_round_replays_the_handler_with_the_answers(server):
    first = (await modern_call(server, "interview"))["result"]
    assert first["resultType"] == "input_required"
    assert list(first["inputRequests"]) == ["name"]
    assert first["inputRequests"]["name"] == {"method": "elicitation/create", "params": ELICIT}
    second = (
        await modern_call(
            server,
            "interview",
            id=2,
            inputResponses={"name": accept(name="Ada")},
            requestState=first["requestState"],
        )
    )["result"]
    assert list(second["inputRequests"]) == ["color"] and second["requestState"] != first["requestState"]
    third = (
        await modern_call(
            server,
            "interview",
            id=3,
            inputResponses={"color": accept(c="green")},
            requestState=second["requestState"],
        )
    )["result"]
    assert third["resultType"] == "complete"
    assert third["content"][0]["text"] == "Ada likes green"


async def test_concurrent_questions_come_back_in_one_round(server):
    first = (await modern_call(server, "fan_out"))["result"]
    assert {q["method"] for q in first["inputRequests"].values()} == {
        "elicitation/create",
        "sampling/createMessage",
        "roots/list",
    }
    answers = {
        "elicitation-1": accept(name="x"),
        "sampling-1": {"role": "assistant", "content": {"type": "text", "text": "y"}, "model": "m"},
        "roots-1": {"roots": [{"uri": "file:///a"}]},
    }
    done = await modern_call(server, "fan_out", inputResponses=answers, requestState=first["requestState"])
    assert done["result"]["content"][0]["text"] == "accept assistant 1"


async def test_the_same_handler_sends_real_requests_in_a_legacy_session(server):
    async def answer(method: str, params: Any) -> dict[str, Any]:
        return accept(name="Ada") if params["message"] == "Name?" else accept(c="red")

    session = await initialized(server, capabilities={"elicitation": {}})
    outbound = RecordingOutbound(answer)
    response = await call(
        server, session, "tools/call", {"name": "interview", "arguments": {}}, outbound=outbound
    )
    assert response["result"]["content"][0]["text"] == "Ada likes red"
    assert [m for m, _ in outbound.requests] == ["elicitation/create", "elicitation/create"]


async def test_undeclared_capability_gets_32021_with_the_capability_named(server):
    response = await modern_call(server, "interview", caps={})
    assert response["error"]["code"] == -32021
    assert response["error"]["data"] == {"requiredCapabilities": {"elicitation": {}}}


@pytest.mark.parametrize(
    "state_for",
    [
        lambda s: s[:-3] + ("AAA" if not s.endswith("AAA") else "BBB"),  # tampered MAC
        lambda s: "x" + s,  # tampered payload
        lambda s: "not-a-state",
        lambda s: 12,
    ],
)
async def test_forged_request_state_gets_32602(server, state_for):
    first = (await modern_call(server, "interview"))["result"]
    response = await modern_call(
        server,
        "interview",
        id=2,
        inputResponses={"name": accept(name="x")},
        requestState=state_for(first["requestState"]),
    )
    assert response["error"]["code"] == -32602 and "requestState" in response["error"]["message"]


async def test_request_state_is_bound_to_principal_tool_and_arguments(server):
    first = (await modern_call(server, "interview", arguments={"a": 1}))["result"]
    retry = {"inputResponses": {"name": accept(name="x")}, "requestState": first["requestState"]}
    for kwargs, what in (
        ({"principal": "mallory", "arguments": {"a": 1}}, "principal"),
        ({"arguments": {"a": 2}}, "arguments"),
    ):
        response = await modern_call(server, "interview", id=2, **kwargs, **retry)
        assert response["error"]["code"] == -32602 and what in response["error"]["message"]
    response = await modern_call(server, "fan_out", id=3, arguments={"a": 1}, **retry)
    assert response["error"]["code"] == -32602 and "target" in response["error"]["message"]


def test_expired_state_and_key_rotation():
    clock = [1000.0]
    old = RequestStateSealer([b"old-key"], ttl=60, clock=lambda: clock[0])
    binding = Binding("p", "tools/call", "t", "digest")
    sealed = old.seal(binding, {"answers": {}})
    rotated = RequestStateSealer([b"new-key", b"old-key"], ttl=60, clock=lambda: clock[0])
    assert rotated.open(sealed, binding) == {"answers": {}}  # a retired key still opens
    assert RequestStateSealer([b"new-key"], ttl=60).seal(binding, {}).split(".")[1] != sealed.split(".")[1]
    with pytest.raises(Exception, match="unknown key"):
        RequestStateSealer([b"new-key"], ttl=60, clock=lambda: clock[0]).open(sealed, binding)
    clock[0] += 61
    with pytest.raises(Exception, match="expired"):
        rotated.open(sealed, binding)


async def test_input_responses_must_be_result_objects(server):
    response = await modern_call(server, "interview", inputResponses={"name": 12345})
    assert response["error"]["code"] == -32602
    response = await modern_call(server, "interview", inputResponses={"name": {"content": {}}})
    assert response["error"]["code"] == -32602 and "action" in response["error"]["message"]


async def test_answers_without_state_are_used_and_extra_keys_ignored(server):
    answers = {"name": accept(name="Ada"), "color": accept(c="blue"), "extra": accept()}
    response = await modern_call(server, "interview", inputResponses=answers)
    assert response["result"]["content"][0]["text"] == "Ada likes blue"


async def test_no_input_required_on_other_methods(server):
    params = {"_meta": modern_meta(), "inputResponses": {"x": {}}}
    response = await server.handle_stateless(Request(1, "tools/list", params), RecordingOutbound(), None)
    assert response is not None and response["result"]["resultType"] == "complete"
