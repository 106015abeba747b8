"""Server→client requests from a tool (client/sampling.mdx, client/elicitation.mdx) via a test Outbound."""

from __future__ import annotations

from .conftest import RecordingOutbound, call, initialized


async def _answer(method, params):
    if method == "sampling/createMessage":
        return {
            "role": "assistant",
            "content": {"type": "text", "text": "42"},
            "model": "m",
            "stopReason": "endTurn",
        }
    return {"action": "accept", "content": {"username": "ada"}}


async def test_a_tool_can_sample_through_the_outbound(server):
    session = await initialized(server, capabilities={"sampling": {}})
    outbound = RecordingOutbound(_answer)
    params = {"name": "ask_llm", "arguments": {"prompt": "meaning of life?"}}
    result = (await call(server, session, "tools/call", params, outbound=outbound))["result"]
    assert result["content"][0]["text"] == "LLM response: 42"
    method, sent = outbound.requests[0]
    assert method == "sampling/createMessage"
    assert sent["messages"][0]["content"]["text"] == "meaning of life?"


async def test_a_tool_can_elicit_through_the_outbound(server):
    session = await initialized(server, capabilities={"elicitation": {}})
    outbound = RecordingOutbound(_answer)
    result = (
        await call(
            server,
            session,
            "tools/call",
            {"name": "ask_user", "arguments": {"message": "who?"}},
            outbound=outbound,
        )
    )["result"]
    assert result["content"][0]["text"] == "User response: accept, {'username': 'ada'}"
    assert outbound.requests[0][0] == "elicitation/create"


async def test_without_the_client_capability_nothing_is_sent_and_the_call_is_a_tool_error(server):
    session = await initialized(server, capabilities={})
    outbound = RecordingOutbound(_answer)
    result = (
        await call(
            server,
            session,
            "tools/call",
            {"name": "ask_llm", "arguments": {"prompt": "x"}},
            outbound=outbound,
        )
    )["result"]
    assert result["isError"] is True and "sampling" in result["content"][0]["text"]
    assert outbound.requests == []


async def test_a_failed_client_request_is_a_tool_error(server):
    session = await initialized(server, capabilities={"sampling": {}})
    outbound = RecordingOutbound(None)  # refuses every request
    result = (
        await call(
            server,
            session,
            "tools/call",
            {"name": "ask_llm", "arguments": {"prompt": "x"}},
            outbound=outbound,
        )
    )["result"]
    assert result == {"content": [{"type": "text", "text": "no client here"}], "isError": True}


async def test_a_tool_can_list_roots_through_the_outbound(server):
    # client/roots.mdx: roots/list has no params; the result is {roots: [{uri, name?}]}.
    async def roots(method, params):
        return {"roots": [{"uri": "file:///work", "name": "work"}, {"uri": "file:///tmp"}]}

    session = await initialized(server, capabilities={"roots": {"listChanged": True}})
    outbound = RecordingOutbound(roots)
    result = (await call(server, session, "tools/call", {"name": "list_roots"}, outbound=outbound))["result"]
    assert outbound.requests == [("roots/list", None)]
    assert result == {"content": [{"type": "text", "text": "work: file:///work\n-: file:///tmp"}]}


async def test_context_list_roots_returns_the_client_result_as_is(server):
    from mcp_protocol.context import Context
    from mcp_protocol.session import Session

    answer = {"roots": [{"uri": "file:///a"}], "_meta": {"x": 1}}

    async def roots(method, params):
        return answer

    session = Session.create()
    session.client_capabilities = {"roots": {}}
    ctx = Context(session=session, outbound=RecordingOutbound(roots))
    assert await ctx.list_roots() == answer


async def test_roots_are_not_requested_from_a_client_without_the_roots_capability(server):
    session = await initialized(server, capabilities={"sampling": {}})
    outbound = RecordingOutbound(_answer)
    result = (await call(server, session, "tools/call", {"name": "list_roots"}, outbound=outbound))["result"]
    assert result["isError"] is True and "'roots' capability" in result["content"][0]["text"]
    assert outbound.requests == []
