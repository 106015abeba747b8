"""A legacy POST's response stream in-process (streams.PostStream) with the in-memory store and bus:
JSON until something must be streamed, every event stored before it is sent, server→client
requests resolved by the client's answer, and a clear error on timeout."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from mcp_protocol.errors import ClientRequestError
from mcp_protocol.jsonrpc import Response
from mcp_protocol.session import Session
from mcp_protocol.stores.memory import MemoryEventStore
from mcp_protocol.transports.streams import PostStream

from .conftest import FakeRuntime, Wire


def session(version: str = "2025-11-25") -> Session:
    return Session(id="s1", protocol_version=version, client_capabilities={"sampling": {}}, state="ready")


async def test_a_quiet_request_is_answered_as_json() -> None:
    rt, wire = FakeRuntime(), Wire()
    stream = PostStream(rt, session(), wire.send, wire.receive)  # type: ignore[arg-type]
    result = await stream.run(_answer({"ok": True}))
    await stream.finish([result] if result else [])
    assert wire.sent[0]["status"] == 200 and (b"content-type", b"application/json") in wire.sent[0]["headers"]
    assert json.loads(wire.body) == {"ok": True}


async def _answer(value: dict[str, Any]) -> dict[str, Any]:
    return value


async def test_a_notification_switches_to_sse_and_every_event_is_stored_first() -> None:
    rt, wire = FakeRuntime(), Wire()
    stream = PostStream(rt, session(), wire.send, wire.receive)  # type: ignore[arg-type]
    await stream.notify("notifications/progress", {"progressToken": 1, "progress": 1})
    await stream.finish([{"jsonrpc": "2.0", "id": 1, "result": {}}])
    assert (b"content-type", b"text/event-stream") in wire.sent[0]["headers"]
    text = wire.body.decode()
    assert text.startswith(f"id: {stream.stream_id}.") and "retry: 100" in text  # the priming event
    stored = [e async for e in _drain(rt.events, stream.stream_id)]
    kinds = [m.get("method") or m.get("_mcpsite") or m.get("id") for m in stored]
    assert kinds == ["prime", "notifications/progress", 1, "end"]
    assert rt.live == []  # unregistered once finished


async def _drain(events: MemoryEventStore, stream_id: str) -> Any:
    listener = events.listen("s1", stream_id)
    try:
        while True:
            event = await asyncio.wait_for(anext(listener), 0.05)
            yield event.message
    except TimeoutError:
        return
    finally:
        await listener.aclose()  # type: ignore[attr-defined]


async def test_server_request_is_resolved_by_the_clients_answer() -> None:
    rt, wire = FakeRuntime(), Wire()
    stream = PostStream(rt, session(), wire.send, wire.receive)  # type: ignore[arg-type]
    asking = asyncio.ensure_future(stream.request("sampling/createMessage", {"messages": []}, 5.0))
    await wire.until(b"sampling/createMessage")
    sent = json.loads(wire.body.decode().rsplit("data: ", 1)[1])
    await rt.pending.deliver("s1", Response(sent["id"], result={"role": "assistant"}))
    assert await asyncio.wait_for(asking, 5) == {"role": "assistant"}
    await stream.finish([])


async def test_server_request_without_an_answer_times_out_with_a_clear_error() -> None:
    rt, wire = FakeRuntime(), Wire()
    stream = PostStream(rt, session(), wire.send, wire.receive)  # type: ignore[arg-type]
    with pytest.raises(ClientRequestError, match=r"no response to roots/list within 0\.05 s"):
        await stream.request("roots/list", None, 0.05)
    await stream.finish([])
    assert rt.pending._listeners == {}  # the bus subscription was released with the stream


async def test_client_disconnect_keeps_the_handler_running_and_its_events_stored() -> None:
    rt, wire = FakeRuntime(), Wire()
    stream = PostStream(rt, session(), wire.send, wire.receive)  # type: ignore[arg-type]
    await stream.notify("notifications/message", {"level": "info", "data": "a"})
    wire.gone.set()
    assert stream.watch is not None
    await asyncio.wait_for(stream.watch.task, 5)  # the watcher noticed the client leave
    assert stream.writer is not None and stream.writer.closed
    before = len(wire.sent)
    await stream.notify("notifications/message", {"level": "info", "data": "b"})
    await stream.finish([{"jsonrpc": "2.0", "id": 9, "result": {}}])
    assert len(wire.sent) == before  # nothing more written to the gone client
    stored = [e async for e in _drain(rt.events, stream.stream_id)]
    assert {"jsonrpc": "2.0", "id": 9, "result": {}} in stored


async def test_close_after_turns_a_slow_json_request_into_sse_polling() -> None:
    rt, wire = FakeRuntime(close_after=0.05), Wire()
    stream = PostStream(rt, session(), wire.send, wire.receive)  # type: ignore[arg-type]

    async def slow() -> dict[str, Any]:
        await asyncio.sleep(0.3)
        return {"jsonrpc": "2.0", "id": 1, "result": {}}

    result = await stream.run(slow())
    body_so_far = wire.body
    await stream.finish([result] if result else [])
    assert body_so_far.endswith(b"retry: 100\n\n") and wire.sent[-1].get("more_body") is False
    assert wire.body == body_so_far  # the result went to the store only
    stored = [e async for e in _drain(rt.events, stream.stream_id)]
    assert result in stored


async def test_older_sessions_are_never_closed_early() -> None:
    rt, wire = FakeRuntime(close_after=0.01), Wire()
    stream = PostStream(rt, session("2025-06-18"), wire.send, wire.receive)  # type: ignore[arg-type]

    async def slow() -> dict[str, Any]:
        await asyncio.sleep(0.1)
        return {"jsonrpc": "2.0", "id": 1, "result": {}}

    result = await stream.run(slow())
    await stream.finish([result] if result else [])
    assert json.loads(wire.body) == result


async def test_an_always_stream_call_logs_prime_response_and_end_in_order_whenever_answered() -> None:
    # The first entry of a lazy stream is deferred (streams.py): answered at once it goes to the
    # store with the response; answered after the watch started, before the priming event's
    # flush. Either way the log is prime, response, end, and the priming event names its first id.
    for delay in (0.0, 0.25):
        rt, wire = FakeRuntime(always_stream=True), Wire()
        stream = PostStream(rt, session(), wire.send, wire.receive, request_ids=[7])  # type: ignore[arg-type]

        async def slow(delay: float = delay) -> dict[str, Any]:
            await asyncio.sleep(delay)
            return {"jsonrpc": "2.0", "id": 7, "result": {}}

        result = await stream.run(slow())
        await stream.finish([result] if result else [])
        log = rt.events.listen("s1", stream.stream_id)
        events = [await anext(log) for _ in range(3)]
        await log.aclose()  # type: ignore[attr-defined]
        assert [e.message for e in events] == [{"_mcpsite": "prime", "ids": [7]}, result, {"_mcpsite": "end"}]
        assert wire.body.startswith(b"id: " + events[0].id.encode() + b"\n"), wire.body


async def test_close_stream_of_an_always_stream_call_takes_the_lease_before_its_id_goes_out() -> None:
    # The client resumes elsewhere from the priming event's id: that worker must find the lease
    # held, or it would answer the running request as orphaned (leases.py).
    rt, wire = FakeRuntime(always_stream=True), Wire()
    stream = PostStream(rt, session(), wire.send, wire.receive, request_ids=[3])  # type: ignore[arg-type]
    held: list[bool] = []

    async def polls() -> dict[str, Any]:
        await stream.close_stream()
        held.append(stream.lease is not None and stream._leasing is not None and stream._leasing.done())
        return {"jsonrpc": "2.0", "id": 3, "result": {}}

    result = await stream.run(polls())
    await stream.finish([result] if result else [])
    assert held == [True]
    assert b"id: " in wire.body and b"retry: 100" in wire.body
