"""The stdio transport in-process: framing, batches, server→client responses, change notifications,
EOF shutdown (basic/transports.mdx "stdio"). The real-process test is tests/integration/test_stdio_sdk.py."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from mcp_protocol.definitions import Tool
from mcp_protocol.memory_provider import MemoryProvider
from mcp_protocol.transports.stdio import StdioTransport

from .conftest import make_server, modern_meta


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


# -- 2026-07-28 over stdio (basic/transports/stdio.mdx of 2026-07-28) -----------------------------
def modern_request(id: Any, method: str, params: dict | None = None, **meta: Any) -> bytes:
    body = dict(params or {})
    body["_meta"] = {**modern_meta(), **meta}
    return line({"jsonrpc": "2.0", "id": id, "method": method, "params": body})


def _bare(provider: MemoryProvider | None = None, **server_options: Any) -> tuple[StdioTransport, Wire]:
    wire = Wire()
    return StdioTransport(make_server(provider, **server_options), wire.write), wire


async def test_a_2026_07_28_client_is_served_statelessly_without_initialize():
    transport, wire = _bare()
    await transport.feed_line(modern_request(1, "server/discover"))
    discover = (await wire.wait_for(lambda m: m.get("id") == 1))["result"]
    assert discover["supportedVersions"][0] == "2026-07-28" and discover["resultType"] == "complete"
    await transport.feed_line(modern_request(2, "tools/list"))
    listed = (await wire.wait_for(lambda m: m.get("id") == 2))["result"]
    assert "echo" in [t["name"] for t in listed["tools"]] and "ttlMs" in listed
    await transport.feed_line(modern_request(3, "resources/read", {"uri": "demo://readme"}))
    assert (await wire.wait_for(lambda m: m.get("id") == 3))["result"]["contents"][0][
        "uri"
    ] == "demo://readme"
    await transport.feed_line(
        modern_request(4, "prompts/get", {"name": "greet", "arguments": {"name": "Ada"}})
    )
    assert (await wire.wait_for(lambda m: m.get("id") == 4))["result"]["messages"]
    await transport.feed_line(
        modern_request(5, "resources/read", {"uri": "demo://missing"})
    )  # 2026-07-28 server/resources.mdx: not found is -32602
    assert (await wire.wait_for(lambda m: m.get("id") == 5))["error"]["code"] == -32602
    assert not transport.session.initialized  # nothing stateful happened to the legacy session
    await transport.shutdown()


async def test_2026_07_28_progress_and_logs_precede_the_response_on_stdout():
    transport, wire = _bare()
    call = {"name": "countdown", "arguments": {"steps": 2}}
    meta = {"progressToken": "tok", "io.modelcontextprotocol/logLevel": "info"}
    await transport.feed_line(modern_request(1, "tools/call", call, **meta))
    response = await wire.wait_for(lambda m: m.get("id") == 1)
    assert response["result"]["content"] == [{"type": "text", "text": "counted 2 steps"}]
    assert response["result"]["resultType"] == "complete"
    before = wire.messages[: wire.messages.index(response)]
    assert [m["params"]["progress"] for m in before if m["method"] == "notifications/progress"] == [1, 2]
    assert [m["params"]["level"] for m in before if m["method"] == "notifications/message"] == [
        "info",
        "info",
    ]
    await transport.shutdown()


async def test_an_unsupported_modern_version_over_stdio_is_32022():
    transport, wire = _bare()
    await transport.feed_line(
        modern_request(1, "tools/list", **{"io.modelcontextprotocol/protocolVersion": "2099-01-01"})
    )
    error = (await wire.wait_for(lambda m: m.get("id") == 1))["error"]
    assert error["code"] == -32022 and error["data"]["requested"] == "2099-01-01"
    await transport.shutdown()


async def test_legacy_and_2026_07_28_messages_share_one_pipe():
    transport, wire = await _started()
    await transport.feed_line(modern_request(1, "tools/list"))
    await transport.feed_line(line({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))
    modern = (await wire.wait_for(lambda m: m.get("id") == 1))["result"]
    legacy = (await wire.wait_for(lambda m: m.get("id") == 2))["result"]
    assert modern["resultType"] == "complete" and "resultType" not in legacy
    await transport.feed_line(modern_request(3, "ping"))  # removed in 2026-07-28
    assert (await wire.wait_for(lambda m: m.get("id") == 3))["error"]["code"] == -32601
    await transport.shutdown()


async def _hanging() -> tuple[MemoryProvider, asyncio.Event, asyncio.Event]:
    started, stopped = asyncio.Event(), asyncio.Event()

    async def hang(args, ctx):
        started.set()
        try:
            await asyncio.Event().wait()
        finally:
            stopped.set()
        return {"content": []}

    return MemoryProvider(tools=[(Tool("hang", {"type": "object"}), hang)]), started, stopped


@pytest.mark.parametrize("with_meta", [True, False])
async def test_notifications_cancelled_stops_a_2026_07_28_request_and_no_response_is_sent(with_meta):
    # 2026-07-28 stdio.mdx "Cancellation": the client MUST send notifications/cancelled; the
    # server MUST NOT send any further messages for the request.
    provider, started, stopped = await _hanging()
    transport, wire = _bare(provider)
    await transport.feed_line(modern_request("a", "tools/call", {"name": "hang"}))
    await asyncio.wait_for(started.wait(), 5)
    params: dict[str, Any] = {"requestId": "a"}
    if with_meta:
        params["_meta"] = modern_meta()
    await transport.feed_line(line({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params}))
    await asyncio.wait_for(stopped.wait(), 5)
    await transport.feed_line(modern_request("b", "tools/list"))
    await wire.wait_for(lambda m: m.get("id") == "b")
    await transport.shutdown(grace=1)
    assert not any(m.get("id") == "a" for m in wire.messages)


async def test_a_2026_07_28_request_reusing_an_in_flight_id_is_refused():
    provider, started, _ = await _hanging()
    transport, wire = _bare(provider)
    await transport.feed_line(modern_request(1, "tools/call", {"name": "hang"}))
    await asyncio.wait_for(started.wait(), 5)
    await transport.feed_line(modern_request(1, "tools/list"))
    error = (await wire.wait_for(lambda m: m.get("id") == 1))["error"]
    assert error["code"] == -32600 and "already in use" in error["message"]
    await transport.shutdown(grace=0)


async def test_the_server_never_writes_a_request_to_stdout_in_2026_07_28():
    # 2026-07-28 stdio.mdx "Receiving Messages": the server MUST NOT write JSON-RPC requests; the
    # handler's questions come back as input-required results (mrtr.mdx).
    transport, wire = _bare()
    caps = {"io.modelcontextprotocol/clientCapabilities": {"sampling": {}, "roots": {}}}
    await transport.feed_line(
        modern_request(1, "tools/call", {"name": "ask_llm", "arguments": {"prompt": "?"}}, **caps)
    )
    await transport.feed_line(modern_request(2, "tools/call", {"name": "list_roots"}, **caps))
    for id in (1, 2):
        result = (await wire.wait_for(lambda m, id=id: m.get("id") == id))["result"]
        assert result["resultType"] == "input_required" and result["requestState"]
    assert not any("method" in m and "id" in m for m in wire.messages)
    await transport.shutdown()


async def test_definition_changes_are_not_pushed_to_a_2026_07_28_client():
    provider = MemoryProvider()
    transport, wire = _bare(provider)
    await transport.feed_line(modern_request(1, "tools/list"))
    await wire.wait_for(lambda m: m.get("id") == 1)
    await transport.on_change(provider, {"kind": "tools"})
    assert [m for m in wire.messages if "method" in m] == []
    await transport.shutdown()


# -- server→client requests over stdio (legacy) ---------------------------------------------------
async def test_a_server_request_that_times_out_is_cancelled_and_the_tool_gets_a_clear_error():
    # basic/utilities/cancellation.mdx: the transport tells the client it no longer wants the
    # answer; the tool sees a ClientRequestError, which becomes an isError result.
    wire = Wire()
    transport = StdioTransport(make_server(client_request_timeout=0.05), wire.write)
    init = {"protocolVersion": "2025-11-25", "capabilities": {"sampling": {}}}
    await transport.feed_line(line({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}))
    call = {"name": "ask_llm", "arguments": {"prompt": "hi"}}
    await transport.feed_line(line({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call}))
    request = await wire.wait_for(lambda m: m.get("method") == "sampling/createMessage")
    cancelled = await wire.wait_for(lambda m: m.get("method") == "notifications/cancelled")
    assert cancelled["params"] == {"requestId": request["id"], "reason": "timeout"}
    response = await wire.wait_for(lambda m: m.get("id") == 1)
    assert response["result"] == {
        "content": [{"type": "text", "text": "No response to sampling/createMessage within 0.05s"}],
        "isError": True,
    }
    assert wire.messages.index(cancelled) < wire.messages.index(response)
    # A reply arriving after the deadline is ignored, not an error and not a crash.
    count = len(wire.messages)
    answer = {"role": "assistant", "content": {"type": "text", "text": "late"}, "model": "m"}
    await transport.feed_line(line({"jsonrpc": "2.0", "id": request["id"], "result": answer}))
    await transport.feed_line(line({"jsonrpc": "2.0", "id": 2, "method": "ping"}))
    await wire.wait_for(lambda m: m.get("id") == 2)
    assert len(wire.messages) == count + 1
    await transport.shutdown()


async def test_a_tool_gets_the_clients_roots_over_stdio():
    transport, wire = await _started(caps={"roots": {}})
    await transport.feed_line(
        line({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "list_roots"}})
    )
    request = await wire.wait_for(lambda m: m.get("method") == "roots/list")
    assert "params" not in request or request["params"] is None
    roots = {"roots": [{"uri": "file:///project", "name": "project"}]}
    await transport.feed_line(line({"jsonrpc": "2.0", "id": request["id"], "result": roots}))
    response = await wire.wait_for(lambda m: m.get("id") == 3)
    assert response["result"]["content"][0]["text"] == "project: file:///project"
    await transport.shutdown()
