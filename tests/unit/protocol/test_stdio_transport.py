"""The stdio transport in-process: framing, batches, server→client responses, change notifications,
EOF shutdown (basic/transports.mdx "stdio"). The real-process test is tests/integration/test_stdio_sdk.py."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from mcp_protocol.definitions import Tool
from mcp_protocol.memory_provider import MemoryProvider
from mcp_protocol.transports.stdio import StdioTransport

from .conftest import make_server


class Wire:
    """Collects what the transport writes and lets a test wait for a matching message."""

    def __init__(self) -> None:
        self.messages: list[Any] = []
        self.changed = asyncio.Event()

    def write(self, data: bytes) -> None:
        assert data.endswith(b"\n") and data.count(b"\n") == 1
        self.messages.append(json.loads(data))
        self.changed.set()

    async def wait_for(self, predicate, deadline: float = 5.0) -> Any:
        async with asyncio.timeout(deadline):
            while True:
                for message in self.messages:
                    if predicate(message):
                        return message
                self.changed.clear()
                await self.changed.wait()


def line(obj: Any) -> bytes:
    return json.dumps(obj).encode() + b"\n"


async def _started(
    provider: MemoryProvider | None = None, version: str = "2025-11-25", caps: dict | None = None
):
    wire = Wire()
    transport = StdioTransport(make_server(provider), wire.write)
    init = {
        "protocolVersion": version,
        "capabilities": caps or {},
        "clientInfo": {"name": "t", "version": "1"},
    }
    await transport.feed_line(line({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}))
    await transport.feed_line(line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    assert wire.messages[0]["result"]["protocolVersion"] == version
    return transport, wire


async def test_requests_are_answered_on_stdout():
    transport, wire = await _started()
    await transport.feed_line(
        line(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": "echo", "arguments": {"message": "a\nb"}},
            }
        )
    )
    response = await wire.wait_for(lambda m: m.get("id") == 1)
    assert response["result"]["content"][0]["text"] == "a\nb"
    await transport.shutdown()


async def test_parse_errors_and_invalid_requests_are_answered_and_serving_continues():
    transport, wire = await _started()
    await transport.feed_line(b"{nope\n")
    await transport.feed_line(line({"jsonrpc": "2.0", "id": True, "method": "ping"}))
    await transport.feed_line(b"   \n")
    await transport.feed_line(line({"jsonrpc": "2.0", "id": 2, "method": "ping"}))
    await wire.wait_for(lambda m: m.get("id") == 2)
    errors = [m["error"]["code"] for m in wire.messages if "error" in m]
    assert errors == [-32700, -32600]
    await transport.shutdown()


async def test_batches_are_rejected_outside_2025_03_26():
    transport, wire = await _started(None, "2025-06-18")
    await transport.feed_line(line([{"jsonrpc": "2.0", "id": 1, "method": "ping"}]))
    response = await wire.wait_for(lambda m: isinstance(m, dict) and "error" in m)
    assert response == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32600, "message": "Invalid Request: batches are not supported"},
    }
    await transport.shutdown()


async def test_a_2025_03_26_batch_gets_an_array_of_responses():
    transport, wire = await _started(None, "2025-03-26")
    batch = [
        {"jsonrpc": "2.0", "id": 1, "method": "ping"},
        {"jsonrpc": "2.0", "method": "notifications/whatever"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"message": "x"}},
        },
        {"jsonrpc": "2.0", "id": None, "method": "ping"},
    ]
    await transport.feed_line(line(batch))
    responses = await wire.wait_for(lambda m: isinstance(m, list))
    assert sorted((r["id"] is None, r.get("id")) for r in responses) == [(False, 1), (False, 2), (True, None)]
    await transport.shutdown()


async def test_client_responses_resolve_server_requests():
    transport, wire = await _started(caps={"sampling": {}})
    await transport.feed_line(
        line(
            {
                "jsonrpc": "2.0",
                "id": 5,
                "method": "tools/call",
                "params": {"name": "ask_llm", "arguments": {"prompt": "hi"}},
            }
        )
    )
    request = await wire.wait_for(lambda m: m.get("method") == "sampling/createMessage")
    answer = {"role": "assistant", "content": {"type": "text", "text": "yo"}, "model": "m"}
    await transport.feed_line(line({"jsonrpc": "2.0", "id": request["id"], "result": answer}))
    response = await wire.wait_for(lambda m: m.get("id") == 5)
    assert response["result"]["content"][0]["text"] == "LLM response: yo"
    await transport.shutdown()


async def test_an_error_reply_to_a_server_request_becomes_a_tool_error():
    transport, wire = await _started(caps={"sampling": {}})
    await transport.feed_line(
        line(
            {
                "jsonrpc": "2.0",
                "id": 5,
                "method": "tools/call",
                "params": {"name": "ask_llm", "arguments": {"prompt": "hi"}},
            }
        )
    )
    request = await wire.wait_for(lambda m: m.get("method") == "sampling/createMessage")
    await transport.feed_line(
        line({"jsonrpc": "2.0", "id": request["id"], "error": {"code": -1, "message": "User rejected"}})
    )
    response = await wire.wait_for(lambda m: m.get("id") == 5)
    assert response["result"] == {"content": [{"type": "text", "text": "User rejected"}], "isError": True}
    await transport.shutdown()


async def test_cancellation_over_stdio_suppresses_the_response():
    started = asyncio.Event()

    async def hang(args, ctx):
        started.set()
        await asyncio.Event().wait()
        return {"content": []}

    transport, wire = await _started(MemoryProvider(tools=[(Tool("hang", {"type": "object"}), hang)]))
    await transport.feed_line(
        line({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "hang"}})
    )
    await asyncio.wait_for(started.wait(), 5)
    await transport.feed_line(
        line({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 9}})
    )
    await transport.feed_line(line({"jsonrpc": "2.0", "id": 10, "method": "ping"}))
    await wire.wait_for(lambda m: m.get("id") == 10)
    await transport.shutdown(grace=1)
    assert not any(m.get("id") == 9 for m in wire.messages)


async def test_changes_refresh_the_provider_and_notify_the_session():
    provider = MemoryProvider()
    transport, wire = await _started(provider)
    await transport.feed_line(
        line({"jsonrpc": "2.0", "id": 1, "method": "resources/subscribe", "params": {"uri": "demo://readme"}})
    )
    await wire.wait_for(lambda m: m.get("id") == 1)
    before = provider.refresh_count
    await transport.on_change(provider, {"kind": "resources", "uris": ["demo://readme", "demo://other"]})
    assert provider.refresh_count == before + 1
    methods = [(m.get("method"), m.get("params")) for m in wire.messages if "method" in m]
    assert methods == [
        ("notifications/resources/list_changed", None),
        ("notifications/resources/updated", {"uri": "demo://readme"}),
    ]
    await transport.shutdown()


async def test_no_change_notifications_before_initialize():
    provider = MemoryProvider()
    wire = Wire()
    transport = StdioTransport(make_server(provider), wire.write)
    await transport.on_change(provider, {"kind": "tools"})
    assert wire.messages == [] and provider.refresh_count == 1


async def test_run_returns_at_eof_after_answering_pending_requests():
    wire = Wire()
    transport = StdioTransport(make_server(), wire.write)
    reader = asyncio.StreamReader()
    init = {"protocolVersion": "2025-11-25", "capabilities": {}}
    reader.feed_data(line({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}))
    reader.feed_data(
        line(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": "countdown", "arguments": {"steps": 2}},
            }
        )
    )
    reader.feed_eof()
    await asyncio.wait_for(transport.run(reader), 10)
    assert any(m.get("id") == 1 and "result" in m for m in wire.messages)
    assert transport.session.state == "closed"


async def test_changes_published_on_the_memory_bus_reach_the_client():
    from mcp_protocol.bus.base import CHANGES
    from mcp_protocol.bus.memory import MemoryBus

    provider = MemoryProvider()
    transport, wire = await _started(provider)
    bus = MemoryBus()
    ready = asyncio.Event()
    watcher = asyncio.create_task(transport.watch(provider, bus, ready))
    try:
        await asyncio.wait_for(ready.wait(), 5)
        await bus.publish(CHANGES, {"kind": "tools"})
        await wire.wait_for(lambda m: m.get("method") == "notifications/tools/list_changed")
        assert provider.refresh_count == 1
    finally:
        watcher.cancel()
        await asyncio.wait({watcher}, timeout=5)
        await bus.close()
    await transport.shutdown()
