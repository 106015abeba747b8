"""Progress, log filtering and cancellation (basic/utilities/progress.mdx, server/utilities/logging.mdx,
basic/utilities/cancellation.mdx; checklist N, P, Q)."""

from __future__ import annotations

import asyncio

import pytest

from mcp_protocol.definitions import Tool
from mcp_protocol.jsonrpc import Notification, Request
from mcp_protocol.memory_provider import MemoryProvider

from .conftest import RecordingOutbound, call, initialized, make_server


async def test_progress_is_reported_for_a_request_with_a_progress_token(server, outbound):
    session = await initialized(server, "2025-03-26")
    params = {"name": "countdown", "arguments": {"steps": 3}, "_meta": {"progressToken": "tok"}}
    response = await call(server, session, "tools/call", params, outbound=outbound)
    assert response["result"]["content"][0]["text"] == "counted 3 steps"
    progress = outbound.of("notifications/progress")
    assert [p["progress"] for p in progress] == [1, 2, 3]
    assert all(p["progressToken"] == "tok" and p["total"] == 3 for p in progress)
    assert progress[0]["message"] == "step 1 of 3"


async def test_progress_message_is_not_sent_to_2024_11_05(server, outbound):
    session = await initialized(server, "2024-11-05")
    params = {"name": "countdown", "arguments": {"steps": 1}, "_meta": {"progressToken": 9}}
    await call(server, session, "tools/call", params, outbound=outbound)
    assert outbound.of("notifications/progress") == [{"progressToken": 9, "progress": 1, "total": 1}]


async def test_no_progress_without_a_token(server, outbound):
    session = await initialized(server)
    await call(
        server, session, "tools/call", {"name": "countdown", "arguments": {"steps": 2}}, outbound=outbound
    )
    assert outbound.of("notifications/progress") == []


async def test_all_levels_are_sent_until_set_level(server, outbound):
    session = await initialized(server)
    await call(
        server, session, "tools/call", {"name": "countdown", "arguments": {"steps": 2}}, outbound=outbound
    )
    levels = [p["level"] for p in outbound.of("notifications/message")]
    assert levels == ["info", "debug", "debug", "info"]


async def test_set_level_filters_lower_levels(server, outbound):
    session = await initialized(server)
    await call(server, session, "logging/setLevel", {"level": "info"})
    await call(
        server, session, "tools/call", {"name": "countdown", "arguments": {"steps": 2}}, outbound=outbound
    )
    messages = outbound.of("notifications/message")
    assert [m["level"] for m in messages] == ["info", "info"]
    assert messages[0]["logger"] == "demo"
    await call(server, session, "logging/setLevel", {"level": "error"})
    outbound.notifications.clear()
    await call(
        server, session, "tools/call", {"name": "countdown", "arguments": {"steps": 2}}, outbound=outbound
    )
    assert outbound.of("notifications/message") == []


async def _slow_server():
    started = asyncio.Event()
    finished = asyncio.Event()
    stopped = asyncio.Event()

    async def slow(args, ctx):
        started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            stopped.set()
            raise
        finished.set()
        return {"content": []}

    server = make_server(MemoryProvider(tools=[(Tool("slow", {"type": "object"}), slow)]))
    return server, started, finished, stopped


async def test_cancelled_request_stops_the_handler_and_gets_no_response():
    server, started, finished, stopped = await _slow_server()
    session = await initialized(server)
    task = asyncio.create_task(
        server.handle(Request(42, "tools/call", {"name": "slow"}), session, RecordingOutbound())
    )
    await asyncio.wait_for(started.wait(), 5)
    cancel = Notification("notifications/cancelled", {"requestId": 42, "reason": "user"})
    assert await server.handle(cancel, session, RecordingOutbound()) is None
    assert await asyncio.wait_for(task, 5) is None
    assert stopped.is_set() and not finished.is_set()
    assert server.in_flight() == 0


async def test_cancelling_an_unknown_or_other_sessions_request_is_ignored():
    server, started, _, stopped = await _slow_server()
    session = await initialized(server)
    other = await initialized(server)
    task = asyncio.create_task(
        server.handle(Request(1, "tools/call", {"name": "slow"}), session, RecordingOutbound())
    )
    await asyncio.wait_for(started.wait(), 5)
    assert server.cancel(other.id, 1) is False
    assert server.cancel(session.id, 999) is False
    assert not stopped.is_set()
    assert server.cancel(session.id, 1) is True
    assert await asyncio.wait_for(task, 5) is None


async def test_cancelling_a_finished_request_is_harmless(server):
    session = await initialized(server)
    response = await call(server, session, "ping", id=3)
    assert response["result"] == {}
    assert server.cancel(session.id, 3) is False


async def test_an_external_cancellation_of_handle_propagates():
    server, started, _, stopped = await _slow_server()
    session = await initialized(server)
    task = asyncio.create_task(
        server.handle(Request(1, "tools/call", {"name": "slow"}), session, RecordingOutbound())
    )
    await asyncio.wait_for(started.wait(), 5)
    task.cancel()
    done, _ = await asyncio.wait({task}, timeout=5)
    assert task in done and task.cancelled()
    assert stopped.is_set()


async def test_progress_and_logs_from_a_leaked_task_stop_once_the_request_completed():
    # basic/utilities/progress.mdx: progress notifications MUST stop after completion.
    release = asyncio.Event()
    leaked: list[asyncio.Task] = []

    async def leaky(args, ctx):
        async def later():
            await release.wait()
            await ctx.report_progress(2, 2)
            await ctx.log("error", "too late")

        await ctx.report_progress(1, 2)
        leaked.append(asyncio.create_task(later()))
        return {"content": []}

    server = make_server(MemoryProvider(tools=[(Tool("leaky", {"type": "object"}), leaky)]))
    session = await initialized(server)
    outbound = RecordingOutbound()
    params = {"name": "leaky", "_meta": {"progressToken": "p"}}
    response = await server.handle(Request(1, "tools/call", params), session, outbound)
    assert response is not None and "result" in response
    release.set()
    await asyncio.wait_for(leaked[0], 5)
    assert [p["progress"] for p in outbound.of("notifications/progress")] == [1]
    assert outbound.of("notifications/message") == []


async def test_a_context_refuses_client_requests_once_its_request_completed():
    from mcp_protocol.errors import ClientRequestError

    kept = []

    async def keep(args, ctx):
        kept.append(ctx)
        return {"content": []}

    server = make_server(MemoryProvider(tools=[(Tool("keep", {"type": "object"}), keep)]))
    session = await initialized(server, capabilities={"roots": {}})
    outbound = RecordingOutbound()
    await server.handle(Request(1, "tools/call", {"name": "keep"}), session, outbound)
    assert kept[0].finished
    with pytest.raises(ClientRequestError, match="already completed"):
        await kept[0].list_roots()
    assert outbound.requests == []


async def test_a_request_id_still_in_flight_is_refused_and_the_first_request_is_untouched():
    # basic/index.mdx "Requests": an id MUST NOT be reused within a session.
    server, started, _, stopped = await _slow_server()
    session = await initialized(server)
    first = asyncio.create_task(
        server.handle(Request(7, "tools/call", {"name": "slow"}), session, RecordingOutbound())
    )
    await asyncio.wait_for(started.wait(), 5)
    duplicate = await server.handle(Request(7, "ping", None), session, RecordingOutbound())
    assert duplicate is not None and duplicate["id"] == 7
    assert duplicate["error"]["code"] == -32600
    assert "request id 7 is already in use" in duplicate["error"]["message"]
    assert server.in_flight() == 1 and not first.done() and not stopped.is_set()
    # The first is still the one a cancel reaches, and the id is free again afterwards.
    assert server.cancel(session.id, 7) is True
    assert await asyncio.wait_for(first, 5) is None
    assert (await call(server, session, "ping", id=7))["result"] == {}


async def test_the_same_id_in_another_session_is_not_a_reuse():
    server, started, _, _ = await _slow_server()
    session, other = await initialized(server), await initialized(server)
    task = asyncio.create_task(
        server.handle(Request(7, "tools/call", {"name": "slow"}), session, RecordingOutbound())
    )
    await asyncio.wait_for(started.wait(), 5)
    assert (await call(server, other, "ping", id=7))["result"] == {}
    server.cancel(session.id, 7)
    assert await asyncio.wait_for(task, 5) is None


async def test_a_tool_sees_the_requests_meta_to_forward_trace_context(outbound):
    seen: list[dict[str, object]] = []

    async def peek(arguments, ctx):
        seen.append(dict(ctx.meta))
        return "ok"

    server = make_server(MemoryProvider(tools=[(Tool("peek", {"type": "object"}), peek)]))
    session = await initialized(server)
    meta = {"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}
    params = {"name": "peek", "arguments": {}, "_meta": meta}
    await call(server, session, "tools/call", params, outbound=outbound)
    await call(server, session, "tools/call", {"name": "peek", "arguments": {}}, outbound=outbound)
    assert seen == [meta, {}]
