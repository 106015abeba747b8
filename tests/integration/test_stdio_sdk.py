"""The official ``mcp`` SDK client drives ``python manage.py mcp_stdio`` as a real subprocess
(basic/transports.mdx "stdio"): handshake, tools, resources, prompts, completion, progress, logs,
sampling and roots requests answered by the client; and the same client in 2026-07-28 mode,
stateless over the same transport. Every wait is bounded."""

from __future__ import annotations

import asyncio
import sys
import warnings
from pathlib import Path
from typing import Any

import mcp_types as types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

ROOT = Path(__file__).resolve().parents[2]
PYTHON = str(ROOT / ".venv" / "bin" / "python")
DEADLINE = 30.0


def _params() -> StdioServerParameters:
    return StdioServerParameters(
        command=PYTHON if Path(PYTHON).exists() else sys.executable,
        args=["manage.py", "mcp_stdio"],
        env={"MCP_PROVIDER": "mcp_protocol.memory_provider.MemoryProvider", "PYTHONUNBUFFERED": "1"},
        cwd=str(ROOT),
    )


async def test_sdk_client_uses_every_server_feature_over_stdio():
    logs: list[types.LoggingMessageNotificationParams] = []
    progress: list[tuple[float, float | None, str | None]] = []
    sampled: list[types.CreateMessageRequestParams] = []
    roots_asked: list[bool] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params)

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, total, message))

    async def on_sampling(
        context: Any, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        sampled.append(params)
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text="forty-two"), model="test-model"
        )

    async def on_roots(context: Any) -> types.ListRootsResult:
        roots_asked.append(True)
        return types.ListRootsResult(roots=[types.Root(uri="file:///work/project", name="project")])

    async with asyncio.timeout(DEADLINE):
        async with stdio_client(_params()) as (read, write):
            async with ClientSession(
                read,
                write,
                sampling_callback=on_sampling,
                logging_callback=on_log,
                list_roots_callback=on_roots,
            ) as session:
                init = await session.initialize()
                assert init.protocol_version == "2025-11-25"
                assert init.server_info.name == "mcpsite"
                assert init.capabilities.tools is not None and init.capabilities.completions is not None

                tools = await session.list_tools()
                names = [t.name for t in tools.tools]
                assert {"echo", "add", "countdown", "ask_llm"} <= set(names)

                echoed = await session.call_tool("echo", {"message": "hello stdio"})
                assert echoed.content[0].text == "hello stdio" and not echoed.is_error

                added = await session.call_tool("add", {"a": 2, "b": 40})
                assert added.structured_content == {"sum": 42}

                invalid = await session.call_tool("echo", {})
                assert invalid.is_error  # 2025-11-25: validation failures are tool errors

                read_result = await session.read_resource("demo://readme")
                assert "demo server" in read_result.contents[0].text

                templated = await session.read_resource("demo://greeting/Ada")
                assert templated.contents[0].text == "Hello, Ada!"

                prompt = await session.get_prompt("greet", {"name": "Ada", "style": "formal"})
                assert prompt.messages[0].content.text == "Write a formal greeting for Ada."

                completion = await session.complete(
                    types.PromptReference(type="ref/prompt", name="greet"), {"name": "name", "value": "Al"}
                )
                assert completion.completion.values == ["Alice", "Alan"]

                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # logging is deprecated in 2026-07-28, not here
                    await session.set_logging_level("debug")
                counted = await session.call_tool("countdown", {"steps": 3}, progress_callback=on_progress)
                assert counted.content[0].text == "counted 3 steps"
                assert [p[0] for p in progress] == [1, 2, 3]
                assert progress[0][2] == "step 1 of 3"
                # Notifications precede the response on the one stdout stream, so they have arrived.
                assert [entry.level for entry in logs] == ["info", "debug", "debug", "debug", "info"]

                answer = await session.call_tool("ask_llm", {"prompt": "meaning of life?"})
                assert answer.content[0].text == "LLM response: forty-two"
                assert sampled[0].messages[0].content.text == "meaning of life?"

                roots = await session.call_tool("list_roots", {})
                assert roots.content[0].text == "project: file:///work/project" and not roots.is_error
                assert roots_asked == [True]

                pong = await session.send_ping()
                assert pong is not None


async def test_sdk_client_in_auto_mode_speaks_2026_07_28_over_stdio():
    # 2026-07-28 stdio.mdx "Backward Compatibility": the client probes server/discover first; a
    # DiscoverResult makes the connection modern (no initialize), and every request then carries
    # its own _meta.
    from mcp.client.client import Client

    logs: list[types.LoggingMessageNotificationParams] = []
    progress: list[float] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params)

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    async with asyncio.timeout(DEADLINE):
        async with Client(_params(), mode="auto", logging_callback=on_log, log_level="info") as client:
            assert client.protocol_version == "2026-07-28"
            assert client.session.initialize_result is None  # no handshake happened
            assert client.server_info is not None and client.server_info.name == "mcpsite"
            tools_capability = client.server_capabilities.tools
            # Delivered on subscriptions/listen streams in 2026-07-28 (methods/subscriptions.py).
            assert tools_capability is not None and tools_capability.list_changed

            names = [t.name for t in (await client.list_tools()).tools]
            assert {"echo", "add", "countdown"} <= set(names)
            echoed = await client.call_tool("echo", {"message": "modern stdio"})
            assert echoed.content[0].text == "modern stdio" and not echoed.is_error
            added = await client.call_tool("add", {"a": 1, "b": 2})
            assert added.structured_content == {"sum": 3}

            read_result = await client.read_resource("demo://greeting/Ada")
            assert read_result.contents[0].text == "Hello, Ada!"
            prompt = await client.get_prompt("greet", {"name": "Ada"})
            assert prompt.messages[0].content.text == "Write a friendly greeting for Ada."
            completion = await client.complete(
                types.PromptReference(type="ref/prompt", name="greet"), {"name": "name", "value": "Al"}
            )
            assert completion.completion.values == ["Alice", "Alan"]

            counted = await client.call_tool("countdown", {"steps": 3}, progress_callback=on_progress)
            assert counted.content[0].text == "counted 3 steps"
            assert progress == [1, 2, 3]
            # logLevel "info" in each request's _meta: the two info lines, not the debug ones.
            assert [entry.level for entry in logs] == ["info", "info"]


async def test_server_answers_then_exits_0_at_eof_with_only_protocol_messages_on_stdout():
    import json
    import os

    env = {**os.environ, "MCP_PROVIDER": "mcp_protocol.memory_provider.MemoryProvider"}
    lines = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"protocolVersion": "2025-03-26", "capabilities": {}},
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        [{"jsonrpc": "2.0", "id": 2, "method": "ping"}, {"jsonrpc": "2.0", "id": 3, "method": "tools/list"}],
        "not json",
    ]
    payload = b"".join((json.dumps(x) if not isinstance(x, str) else x).encode() + b"\n" for x in lines)
    process = await asyncio.create_subprocess_exec(
        _params().command,
        "manage.py",
        "mcp_stdio",
        cwd=str(ROOT),
        env=env,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        async with asyncio.timeout(DEADLINE):
            out, _err = await process.communicate(payload)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert process.returncode == 0
    messages = [json.loads(line) for line in out.decode().splitlines()]
    assert messages[0]["result"]["protocolVersion"] == "2025-03-26"
    batch = next(m for m in messages if isinstance(m, list))
    assert sorted(r["id"] for r in batch) == [2, 3]
    assert any(isinstance(m, dict) and m.get("error", {}).get("code") == -32700 for m in messages)


async def test_sigterm_during_a_long_call_still_exits_0():
    import json
    import os
    import signal

    env = {**os.environ, "MCP_PROVIDER": "mcp_protocol.memory_provider.MemoryProvider"}
    process = await asyncio.create_subprocess_exec(
        _params().command,
        "manage.py",
        "mcp_stdio",
        cwd=str(ROOT),
        env=env,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        async with asyncio.timeout(DEADLINE):
            init = {"protocolVersion": "2025-11-25", "capabilities": {}}
            process.stdin.write(
                json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}).encode()
                + b"\n"
            )
            await process.stdin.drain()
            assert json.loads(await process.stdout.readline())["id"] == 1
            call = {"name": "slow", "arguments": {"seconds": 600}}
            process.stdin.write(
                json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call}).encode()
                + b"\n"
            )
            process.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 3, "method": "ping"}).encode() + b"\n")
            await process.stdin.drain()
            assert json.loads(await process.stdout.readline())["id"] == 3  # the slow call does not block ping
            process.send_signal(signal.SIGTERM)
            assert await process.wait() == 0
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
