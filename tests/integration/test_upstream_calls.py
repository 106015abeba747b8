"""Calls through an upstream MCP server (issue 40 item 4), end to end on loopback: an official
Python SDK server as a process of its own (``tests/support/sdk_upstream_process.py``), mirrored rows
made directly in the database of a real mcpsite server process, and the official SDK's client
calling mcpsite: ``tools/call``, ``resources/read`` of a resource and of a template's URI,
``prompts/get``, ``completion/complete``, progress and log messages relayed, our client's
cancellation reaching the upstream's tool, the per-upstream concurrency cap, and the upstream's
2026-07-28 questions (an input-required result: elicitation and roots) asked of our client in
either of our eras, or refused when our client did not declare the capability.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from mcp import types
from mcp.client.client import Client
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from tests.support import everything
from tests.support.live_server import REGISTRY_PROVIDER, LiveServer
from tests.support.otlp import OtlpReceiver
from tests.support.sdk_upstream_process import UpstreamProcess
from tests.support.upstream_rows import mirror_script

pytestmark = pytest.mark.timeout(300)  # the module server's start counts against the first test
ENV = {"MCP_PROVIDER": REGISTRY_PROVIDER, "REGISTRY_HTTP_ALLOWED_HOSTS": "127.0.0.1"}


EVERYTHING_TOOLS = ("trigger-elicitation-request", "trigger-sampling-request",
                    "trigger-long-running-operation")


@pytest.fixture(scope="module")
def served() -> Iterator[LiveServer]:
    """One server for the module: ``up_*`` from the SDK upstream, ``ev_*`` from the reference
    server-everything (a 2025-era upstream: its questions come as requests on the call's stream)."""
    with contextlib.ExitStack() as stack:
        upstream = stack.enter_context(UpstreamProcess())
        script = mirror_script("up", upstream.url, max_concurrency=2, local=True)
        if everything.installed():
            reference = stack.enter_context(everything.Everything())
            script += "; " + mirror_script("ev", reference.url, tools=EVERYTHING_TOOLS, resources=False,
                                           timeout=10.0)
        yield stack.enter_context(LiveServer(env=ENV, load=[["shell", "-c", script]]))


needs_everything = pytest.mark.skipif(not everything.installed(), reason="needs scripts/install-tools.sh")


@contextlib.asynccontextmanager
async def _client(url: str) -> AsyncIterator[ClientSession]:
    async with Client(streamable_http_client(url), mode="legacy") as client:
        yield client.session


def _text(result: Any) -> str:
    return "".join(block.text for block in result.content if isinstance(block, types.TextContent))


async def test_a_tool_call_returns_the_upstreams_result(served: LiveServer) -> None:
    async with _client(served.url) as session:
        names = {tool.name for tool in (await session.list_tools()).tools}
        assert {"up_echo", "up_add", "local_echo"} <= names
        added = await session.call_tool("up_add", {"a": 2, "b": 40})
        assert added.is_error is False and added.structured_content == {"result": 42}
        assert _text(await session.call_tool("up_echo", {"text": "héllo"})) == "héllo"
        # The upstream's own tool failure is its isError result, passed through.
        failed = await session.call_tool("up_fail", {})
        assert failed.is_error is True and "failed on purpose" in _text(failed)


async def test_resources_prompts_and_completion_go_to_the_upstream(served: LiveServer) -> None:
    async with _client(served.url) as session:
        read = await session.read_resource("memo://readme")
        assert [c.text for c in read.contents if isinstance(c, types.TextResourceContents)] == [
            "hello from upstream"]
        note = await session.read_resource("memo://notes/seven")
        assert note.contents[0].text == "note seven"  # type: ignore[union-attr]
        prompt = await session.get_prompt("up_greet", {"who": "Ada"})
        assert prompt.messages[0].content.text == "Hello Ada"  # type: ignore[union-attr]
        # Our names go out as the upstream's: up_greet → greet, the template's URI template as is.
        who = await session.complete(types.PromptReference(type="ref/prompt", name="up_greet"),
                                     {"name": "who", "value": "al"})
        assert who.completion.values == ["alice", "albert"]
        slug = await session.complete(
            types.ResourceTemplateReference(type="ref/resource", uri="memo://notes/{slug}"),
            {"name": "slug", "value": "t"})
        assert slug.completion.values == ["two"]


async def test_progress_is_relayed(served: LiveServer) -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        seen.append((value, total, message))

    async with _client(served.url) as session:
        result = await session.call_tool("up_slow", {"seconds": 0, "steps": 3, "key": "progress"},
                                         progress_callback=progress)
        assert result.is_error is False, _text(result)
    assert [(v, t) for v, t, _ in seen] == [(1, 3), (2, 3), (3, 3)]
    assert seen[-1][2] == "step 3"


async def test_our_clients_cancellation_reaches_the_upstream(served: LiveServer) -> None:
    async with _client(served.url) as session:
        call = asyncio.create_task(
            session.call_tool("up_slow", {"seconds": 30, "steps": 1, "key": "cancel-me"}))
        await asyncio.sleep(1.0)  # the upstream's tool is running
        call.cancel()  # the SDK sends notifications/cancelled to us; we cancel the upstream call
        with pytest.raises(asyncio.CancelledError):
            await call
        for _ in range(50):
            recorded = await session.call_tool("up_recorded", {"key": "cancel-me"})
            if recorded.structured_content != {"result": []}:
                break
            await asyncio.sleep(0.1)
        # The upstream's tool saw its cancellation (it would say "done" after 30 s otherwise).
        assert recorded.structured_content == {"result": ["cancelled"]}


async def test_the_concurrency_cap_holds_calls_until_a_slot_frees(served: LiveServer) -> None:
    async with _client(served.url) as session:
        results = await asyncio.gather(*(session.call_tool("up_hold", {"key": "cap"}) for _ in range(6)))
        assert all(r.is_error is False for r in results), [_text(r) for r in results]
        peaks = await session.call_tool("up_recorded", {"key": "peak:cap"})
        assert max(int(p) for p in peaks.structured_content["result"]) == 2  # type: ignore[index]


async def test_an_oversized_result_is_refused(served: LiveServer) -> None:
    async with _client(served.url) as session:
        fine = await session.call_tool("up_big", {"kib": 64})
        assert fine.is_error is False
        huge = await session.call_tool("up_big", {"kib": 5 * 1024})
        assert huge.is_error is True and "more than" in _text(huge)


async def test_an_upstream_call_is_a_client_span_naming_the_upstream_not_the_arguments() -> None:
    client_kind = 3  # SpanKind.CLIENT in the OTLP protobuf
    with OtlpReceiver() as otlp, UpstreamProcess() as upstream:
        script = mirror_script("up", upstream.url, tools=("echo",), resources=False)
        env = {**ENV, "OTEL_EXPORTER_OTLP_ENDPOINT": otlp.endpoint, "OTEL_BSP_SCHEDULE_DELAY": "50"}
        with LiveServer(env=env, load=[["shell", "-c", script]]) as server:
            async with _client(server.url) as session:
                result = await session.call_tool("up_echo", {"text": "a-secret-argument"})
                assert result.is_error is False
            span = otlp.wait_for(lambda s: s.name == "tools/call echo" and s.kind == client_kind)
            served = otlp.wait_for(lambda s: s.name == "tools/call up_echo")
    assert span.trace_id == served.trace_id  # a child of our request's trace
    assert span.attributes["mcp.upstream.name"] == "up"
    assert span.attributes["mcp.method.name"] == "tools/call"
    assert span.attributes["gen_ai.tool.name"] == "echo"
    assert "a-secret-argument" not in repr(span.attributes)


async def test_a_2026_client_gets_the_same_call_progress_and_read(served: LiveServer) -> None:
    """Our stateless 2026-07-28 era relays as the session era does (the SDK client negotiates it)."""
    seen: list[float] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        seen.append(value)

    async with Client(streamable_http_client(served.url), mode="auto") as client:
        session = client.session
        result = await session.call_tool("up_slow", {"seconds": 0, "steps": 2, "key": "modern"},
                                         progress_callback=progress)
        assert result.is_error is False and _text(result) == "slept 0.0"
        assert (await session.read_resource("memo://readme")).contents[0].text == (  # type: ignore[union-attr]
            "hello from upstream")
    assert seen == [1, 2]


async def test_log_messages_are_relayed_at_our_clients_level(served: LiveServer) -> None:
    heard: list[tuple[str, Any, str | None]] = []

    async def log(params: types.LoggingMessageNotificationParams) -> None:
        heard.append((params.level, params.data, params.logger))

    async with Client(streamable_http_client(served.url), mode="legacy", logging_callback=log) as client:
        await client.session.set_logging_level("debug")
        result = await client.session.call_tool("up_chatty", {"text": "said upstream"})
        assert _text(result) == "said upstream"
    assert ("info", "said upstream", "chatty") in heard


async def _name(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"name": "Ada"})


async def _roots(context: Any) -> types.ListRootsResult:
    return types.ListRootsResult(roots=[types.Root(uri="file:///work", name="work")])


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_the_upstreams_questions_are_asked_of_our_client(served: LiveServer, mode: str) -> None:
    """The upstream (2026-07-28) asks by an input-required result; we ask our client: a real
    elicitation/create and roots/list in a 2025 session, our own input-required round (which the
    SDK client answers and retries) in 2026-07-28."""
    async with Client(streamable_http_client(served.url), mode=mode,  # type: ignore[arg-type]
                      elicitation_callback=_name, list_roots_callback=_roots) as client:
        result = await client.call_tool("up_interview", {})
    assert result.is_error is False, _text(result)
    assert _text(result) == "name=Ada roots=file:///work state=asked"


async def test_a_question_our_client_cannot_answer_fails_the_call_naming_the_capability(
        served: LiveServer) -> None:
    async with _client(served.url) as session:  # no elicitation, no roots
        result = await session.call_tool("up_interview", {})
    assert result.is_error is True
    assert "needs the client capability 'elicitation'" in _text(result)


async def _sample(context: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
    asked = params.messages[0].content.text  # type: ignore[union-attr]
    return types.CreateMessageResult(role="assistant", model="loopback",
                                     content=types.TextContent(type="text", text=f"sampled: {asked}"))


@needs_everything
async def test_the_reference_servers_requests_reach_our_client_and_our_answers_reach_it(
        served: LiveServer) -> None:
    """server-everything (2025 era) sends elicitation/create and sampling/createMessage on the
    call's stream; our client answers through us; progress comes the same way."""
    seen: list[float] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        seen.append(value)

    async with Client(streamable_http_client(served.url), mode="legacy", elicitation_callback=_name,
                      sampling_callback=_sample) as client:
        session = client.session
        elicited = await session.call_tool("ev_trigger-elicitation-request", {})
        assert elicited.is_error is False and "Ada" in _text(elicited), _text(elicited)
        sampled = await session.call_tool("ev_trigger-sampling-request", {"prompt": "hi", "maxTokens": 5})
        assert sampled.is_error is False and "sampled: " in _text(sampled), _text(sampled)
        long = await session.call_tool("ev_trigger-long-running-operation", {"duration": 0.3, "steps": 3},
                                       progress_callback=progress)
        assert long.is_error is False, _text(long)
    assert seen == [1, 2, 3]


@needs_everything
async def test_a_request_for_a_capability_our_client_lacks_is_refused_to_the_upstream(
        served: LiveServer) -> None:
    async with _client(served.url) as session:  # declares no sampling
        result = await session.call_tool("ev_trigger-sampling-request", {"prompt": "hi", "maxTokens": 5})
    assert result.is_error is True
    assert "sampling" in _text(result), _text(result)
