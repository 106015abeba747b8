"""The official ``mcp`` SDK client (Streamable HTTP) tours a real uvicorn server, in JSON and SSE mode.

One server per mode (module-scoped): uvicorn answering JSON, uvicorn and daphne always streaming
(``MCP_ALWAYS_STREAM=1``); the in-memory demo provider.
The client negotiates 2025-11-25, so SSE responses carry the priming event it must tolerate.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from mcp import types
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from tests.support import MEMORY_PROVIDER, LiveServer

pytestmark = [
    pytest.mark.timeout(60),
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]


@pytest.fixture(scope="module", params=["uvicorn-json", "uvicorn-sse", "daphne-sse"])
def live(request: pytest.FixtureRequest) -> Iterator[LiveServer]:
    kind, mode = request.param.split("-")
    env = {"MCP_ALWAYS_STREAM": "1" if mode == "sse" else "0"}
    server = LiveServer(provider=MEMORY_PROVIDER, env=env, server=kind).start()
    try:
        yield server
    finally:
        server.stop()


class Recorder:
    def __init__(self) -> None:
        self.logs: list[types.LoggingMessageNotificationParams] = []
        self.sampling: list[types.CreateMessageRequestParams] = []

    async def on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        self.logs.append(params)

    async def on_sampling(
        self, context: Any, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        self.sampling.append(params)
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text="four"),
            model="test-model",
            stop_reason="endTurn",
        )


async def on_elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    assert params.message == "Who are you?"
    return types.ElicitResult(action="accept", content={"username": "ada"})


async def on_roots(context: Any) -> types.ListRootsResult:
    return types.ListRootsResult(roots=[types.Root(uri="file:///work/project", name="project")])


@asynccontextmanager
async def connect(url: str, recorder: Recorder, **callbacks: Any) -> AsyncIterator[ClientSession]:
    callbacks.setdefault("sampling_callback", recorder.on_sampling)
    async with streamable_http_client(url) as (read, write):
        async with ClientSession(read, write, logging_callback=recorder.on_log, **callbacks) as session:
            with anyio.fail_after(20):
                yield session


async def test_sdk_client_initializes_and_lists_and_calls_tools(live: LiveServer) -> None:
    recorder = Recorder()
    async with connect(live.url, recorder) as session:
        init = await session.initialize()
        assert init.protocol_version == "2025-11-25"
        assert init.server_info.name == "mcpsite"
        tools = await session.list_tools()
        assert {"echo", "add", "countdown", "ask_llm"} <= {t.name for t in tools.tools}
        echoed = await session.call_tool("echo", {"message": "hello"})
        assert echoed.content[0].text == "hello"  # type: ignore[union-attr]
        added = await session.call_tool("add", {"a": 2, "b": 3})
        assert added.structured_content == {"sum": 5}
        failed = await session.call_tool("fail", {"reason": "nope"})
        assert failed.is_error is True
        await session.send_ping()


async def test_sdk_client_gets_progress_and_logs_during_a_call(live: LiveServer) -> None:
    recorder = Recorder()
    progress: list[tuple[float, float | None, str | None]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, total, message))

    async with connect(live.url, recorder) as session:
        await session.initialize()
        await session.set_logging_level("debug")
        result = await session.call_tool("countdown", {"steps": 3}, progress_callback=on_progress)
        assert result.content[0].text == "counted 3 steps"  # type: ignore[union-attr]
    assert [p[0] for p in progress] == [1, 2, 3]
    assert all(p[1] == 3 for p in progress)
    messages = [log.data for log in recorder.logs]
    assert {"event": "countdown started", "steps": 3} in messages
    assert "step 2 of 3" in messages and "countdown finished" in messages


async def test_sdk_client_answers_sampling_during_a_tool_call(live: LiveServer) -> None:
    recorder = Recorder()
    async with connect(live.url, recorder) as session:
        await session.initialize()
        result = await session.call_tool("ask_llm", {"prompt": "2+2?"})
    assert result.content[0].text == "LLM response: four"  # type: ignore[union-attr]
    assert len(recorder.sampling) == 1
    assert recorder.sampling[0].messages[0].content.text == "2+2?"  # type: ignore[union-attr]


async def test_sdk_client_answers_elicitation_and_roots_during_tool_calls(live: LiveServer) -> None:
    callbacks = {"elicitation_callback": on_elicit, "list_roots_callback": on_roots}
    async with connect(live.url, Recorder(), **callbacks) as s:
        await s.initialize()
        asked = await s.call_tool("ask_user", {"message": "Who are you?"})
        assert asked.content[0].text == "User response: accept, {'username': 'ada'}"  # type: ignore[union-attr]
        roots = await s.call_tool("list_roots", {})
        assert roots.content[0].text == "project: file:///work/project"  # type: ignore[union-attr]


async def test_tools_needing_an_undeclared_client_capability_fail_clearly(live: LiveServer) -> None:
    # [06+] lifecycle.mdx: the server uses only what the client declared; this client declares
    # none of sampling, elicitation and roots (the SDK declares what it has callbacks for).
    async with connect(live.url, Recorder(), sampling_callback=None) as session:
        await session.initialize()
        for tool, arguments, capability in [("ask_llm", {"prompt": "2+2?"}, "sampling"),
                                            ("ask_user", {"message": "Who?"}, "elicitation"),
                                            ("list_roots", {}, "roots")]:
            result = await session.call_tool(tool, arguments)
            assert result.is_error is True
            text = result.content[0].text  # type: ignore[union-attr]
            assert f"did not declare the '{capability}' capability" in text, text


async def test_sdk_client_reads_and_subscribes_resources(live: LiveServer) -> None:
    async with connect(live.url, Recorder()) as session:
        await session.initialize()
        listed = await session.list_resources()
        assert [str(r.uri) for r in listed.resources] == ["demo://readme"]
        templates = await session.list_resource_templates()
        assert templates.resource_templates[0].uri_template == "demo://greeting/{name}"
        read = await session.read_resource("demo://readme")
        assert "mcpsite demo server" in read.contents[0].text  # type: ignore[union-attr]
        greeting = await session.read_resource("demo://greeting/Ada")
        assert greeting.contents[0].text == "Hello, Ada!"  # type: ignore[union-attr]
        await session.subscribe_resource("demo://readme")
        await session.unsubscribe_resource("demo://readme")  # type: ignore[attr-defined]


async def test_sdk_client_gets_prompts_and_completions(live: LiveServer) -> None:
    async with connect(live.url, Recorder()) as session:
        await session.initialize()
        prompts = await session.list_prompts()
        assert [p.name for p in prompts.prompts] == ["greet"]
        prompt = await session.get_prompt("greet", {"name": "Ada", "style": "formal"})
        assert prompt.messages[0].content.text == "Write a formal greeting for Ada."  # type: ignore[union-attr]
        completion = await session.complete(
            types.PromptReference(type="ref/prompt", name="greet"), {"name": "name", "value": "Al"}
        )
        assert completion.completion.values == ["Alice", "Alan"]
