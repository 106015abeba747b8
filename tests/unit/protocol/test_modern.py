"""2026-07-28 stateless requests: per-request _meta, server/discover, resultType, caching hints
(checklist G 36-40, T)."""

from __future__ import annotations

import asyncio

import pytest

from mcp_protocol.jsonrpc import Notification, Request
from mcp_protocol.memory_provider import MemoryProvider

from .conftest import RecordingOutbound, make_server, modern_meta

SERVER_INFO = "io.modelcontextprotocol/serverInfo"


async def modern(server, method, params=None, *, meta=None, id=1, outbound=None):
    params = dict(params or {})
    params["_meta"] = modern_meta() if meta is None else meta
    response = await server.handle_stateless(
        Request(id, method, params), outbound or RecordingOutbound(), "alice"
    )
    assert response is not None and response["id"] == id
    return response


def test_modern_requests_are_recognized_by_their_meta(server):
    assert server.is_modern_request(Request(1, "tools/list", {"_meta": modern_meta()}))
    assert not server.is_modern_request(Request(1, "tools/list", {"_meta": {"progressToken": 1}}))
    assert not server.is_modern_request(Request(1, "tools/list", None))
    # An initialize carrying modern _meta is a modern request for a removed method (-32601).
    assert server.is_modern_request(Request(1, "initialize", {"_meta": modern_meta()}))
    assert not server.is_modern_request(Request(1, "initialize", {"protocolVersion": "2025-11-25"}))


async def test_server_discover(server):
    result = (await modern(server, "server/discover"))["result"]
    assert result["supportedVersions"][0] == "2026-07-28"
    assert set(result["supportedVersions"]) == {
        "2024-11-05",
        "2025-03-26",
        "2025-06-18",
        "2025-11-25",
        "2026-07-28",
    }
    assert result["resultType"] == "complete"
    assert result["ttlMs"] == 0 and result["cacheScope"] == "private"
    assert result["_meta"][SERVER_INFO] == {"name": "test-server", "version": "1.2.3", "title": "Test Server"}


async def test_discover_advertises_the_change_notifications_listen_streams_deliver(server):
    # 2026-07-28 delivers list_changed / resources/updated on subscriptions/listen streams
    # (basic/patterns/subscriptions.mdx).
    capabilities = (await modern(server, "server/discover"))["result"]["capabilities"]
    assert capabilities["tools"] == {"listChanged": True}
    assert capabilities["prompts"] == {"listChanged": True}
    assert capabilities["resources"] == {"subscribe": True, "listChanged": True}
    assert capabilities["logging"] == {} and capabilities["completions"] == {}


@pytest.mark.parametrize(
    "method", ["tools/list", "resources/list", "resources/templates/list", "prompts/list"]
)
async def test_list_results_carry_result_type_and_caching_hints(server, method):
    result = (await modern(server, method))["result"]
    assert result["resultType"] == "complete" and "ttlMs" in result and result["cacheScope"] == "private"
    assert SERVER_INFO in result["_meta"]


async def test_call_results_carry_result_type_but_no_caching_hints(server):
    result = (await modern(server, "tools/call", {"name": "echo", "arguments": {"message": "m"}}))["result"]
    assert result["content"] == [{"type": "text", "text": "m"}]
    assert result["resultType"] == "complete" and "ttlMs" not in result


async def test_read_is_cacheable_and_not_found_is_invalid_params(server):
    read = (await modern(server, "resources/read", {"uri": "demo://readme"}))["result"]
    assert read["ttlMs"] == 0 and read["contents"][0]["uri"] == "demo://readme"
    missing = await modern(server, "resources/read", {"uri": "demo://missing"})
    assert missing["error"]["code"] == -32602 and missing["error"]["data"] == {"uri": "demo://missing"}


async def test_custom_cache_hints_are_used():
    server = make_server(cache_ttl_ms=5000, cache_scope="public")
    result = (await modern(server, "tools/list"))["result"]
    assert (result["ttlMs"], result["cacheScope"]) == (5000, "public")


async def test_an_unsupported_version_is_32022_with_supported_and_requested(server):
    meta = modern_meta("2099-01-01")
    error = (await modern(server, "tools/list", meta=meta))["error"]
    assert error["code"] == -32022
    assert error["data"]["requested"] == "2099-01-01"
    assert "2026-07-28" in error["data"]["supported"]
    legacy = (await modern(server, "tools/list", meta=modern_meta("2025-11-25")))["error"]
    assert legacy["code"] == -32022


@pytest.mark.parametrize(
    "drop", ["io.modelcontextprotocol/protocolVersion", "io.modelcontextprotocol/clientCapabilities"]
)
async def test_a_missing_required_meta_field_is_invalid_params(server, drop):
    meta = modern_meta()
    del meta[drop]
    assert (await modern(server, "tools/list", meta=meta))["error"]["code"] == -32602


async def test_missing_meta_altogether_is_invalid_params(server):
    response = await server.handle_stateless(Request(1, "tools/list", {}), RecordingOutbound())
    assert response["error"]["code"] == -32602


@pytest.mark.parametrize(
    "method",
    ["ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe", "initialize", "nope"],
)
async def test_methods_removed_in_2026_are_method_not_found(server, method):
    assert (await modern(server, method, {"level": "info", "uri": "demo://readme"}))["error"][
        "code"
    ] == -32601


async def test_unknown_tool_is_invalid_params(server):
    assert (await modern(server, "tools/call", {"name": "nope"}))["error"]["code"] == -32602


async def test_invalid_arguments_are_tool_errors(server):
    result = (await modern(server, "tools/call", {"name": "echo", "arguments": {}}))["result"]
    assert result["isError"] is True and result["resultType"] == "complete"


async def test_logs_need_the_log_level_meta(server):
    silent = RecordingOutbound()
    await modern(server, "tools/call", {"name": "countdown", "arguments": {"steps": 1}}, outbound=silent)
    assert silent.of("notifications/message") == []
    loud = RecordingOutbound()
    meta = modern_meta(**{"io.modelcontextprotocol/logLevel": "info", "progressToken": "p"})
    await modern(
        server, "tools/call", {"name": "countdown", "arguments": {"steps": 1}}, meta=meta, outbound=loud
    )
    assert [m["level"] for m in loud.of("notifications/message")] == ["info", "info"]
    assert loud.of("notifications/progress")[0]["progressToken"] == "p"


async def test_an_unknown_log_level_is_invalid_params(server):
    meta = modern_meta(**{"io.modelcontextprotocol/logLevel": "shouty"})
    assert (await modern(server, "tools/list", meta=meta))["error"]["code"] == -32602


async def test_the_transient_session_carries_principal_and_client_capabilities():
    seen = []

    class Spy(MemoryProvider):
        async def call_tool(self, tool, arguments, ctx):
            seen.append((ctx.principal, ctx.client_capabilities, ctx.session.stateless, ctx.protocol_version))
            return {"content": []}

    server = make_server(Spy())
    meta = modern_meta(**{"io.modelcontextprotocol/clientCapabilities": {"sampling": {}}})
    await modern(server, "tools/call", {"name": "echo", "arguments": {"message": "x"}}, meta=meta)
    assert seen == [("alice", {"sampling": {}}, True, "2026-07-28")]


async def test_modern_notifications_get_no_response(server):
    note = Notification("notifications/cancelled", {"requestId": 1, "_meta": modern_meta()})
    assert await server.handle_stateless(note, RecordingOutbound()) is None


async def test_a_stateless_request_can_be_cancelled_by_its_task():
    started, stopped = asyncio.Event(), asyncio.Event()

    class Slow(MemoryProvider):
        async def call_tool(self, tool, arguments, ctx):
            started.set()
            try:
                await asyncio.Event().wait()
            finally:
                stopped.set()
            return {"content": []}

    server = make_server(Slow())
    params = {"name": "slow", "arguments": {}, "_meta": modern_meta()}
    task = asyncio.create_task(server.handle_stateless(Request(1, "tools/call", params), RecordingOutbound()))
    await asyncio.wait_for(started.wait(), 5)
    task.cancel()
    done, _ = await asyncio.wait({task}, timeout=5)
    assert task in done and task.cancelled() and stopped.is_set()
