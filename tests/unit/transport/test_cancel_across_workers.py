"""Cross-worker cancellation in-process (transports/pending.py, streams.PostStream): a
``notifications/cancelled`` received by one worker reaches the request running on another through
the session's bus channel, and a request listens on that channel only once it is worth cancelling.
Two ``PendingRequests`` on one in-memory bus stand for two workers; the same routing over the real
Redis is in tests/contract/test_session_channel.py."""

from __future__ import annotations

import asyncio
from typing import Any

from mcp_protocol.bus.base import Subscription, session_channel
from mcp_protocol.bus.memory import MemoryBus
from mcp_protocol.context import Context
from mcp_protocol.definitions import Tool
from mcp_protocol.jsonrpc import Request, Response
from mcp_protocol.memory_provider import MemoryProvider
from mcp_protocol.transports.pending import PendingRequests
from mcp_protocol.transports.streams import PostStream
from tests.unit.protocol.conftest import initialized, make_server
from tests.unit.transport.conftest import FakeRuntime, Wire

OBJECT: dict[str, Any] = {"type": "object"}


class CountingBus(MemoryBus):
    """Counts SUBSCRIBEs: a fast request must cost none."""

    def __init__(self) -> None:
        super().__init__()
        self.subscriptions = 0
        self.subscribed = asyncio.Event()

    async def subscribe(self, channel: str) -> Subscription:
        subscription = await super().subscribe(channel)
        self.subscriptions += 1
        self.subscribed.set()
        return subscription


async def first(subscription: Subscription) -> dict[str, Any]:
    async with asyncio.timeout(5):
        async for message in subscription:
            return message
    raise AssertionError("subscription ended")


async def test_a_cancel_received_by_another_worker_reaches_the_worker_running_the_request() -> None:
    bus = MemoryBus()
    reached = asyncio.Event()
    cancelled: list[tuple[str, object]] = []

    def running_here(session_id: str, request_id: object) -> bool:
        cancelled.append((session_id, request_id))
        reached.set()
        return True

    receiving, running = PendingRequests(bus), PendingRequests(bus, on_cancel=running_here)
    await running.acquire("s1")
    await receiving.cancel("s1", {"requestId": 7, "reason": "user gave up"})
    await asyncio.wait_for(reached.wait(), 5)
    assert cancelled == [("s1", 7)]
    await running.release("s1")
    assert running._listeners == {}


async def test_a_cancel_for_a_request_running_here_or_malformed_is_not_published() -> None:
    bus = MemoryBus()
    here: list[object] = []

    def running_here(session_id: str, request_id: object) -> bool:
        here.append(request_id)
        return True

    pending = PendingRequests(bus, on_cancel=running_here)
    channel = await bus.subscribe(session_channel("s1"))
    await pending.cancel("s1", {"requestId": "r1"})  # runs here: cancelled here only
    await pending.cancel("s1", {"requestId": True})  # not an id
    await pending.cancel("s1", None)
    await bus.publish(session_channel("s1"), {"marker": 1})
    assert await first(channel) == {"marker": 1}  # nothing was published before it
    assert here == ["r1"]
    await channel.close()


async def test_answers_and_cancels_share_one_subscription_per_session() -> None:
    bus = CountingBus()
    reached = asyncio.Event()

    def running_here(session_id: str, request_id: object) -> bool:
        reached.set()
        return True

    worker = PendingRequests(bus, on_cancel=running_here)
    other = PendingRequests(bus)
    request_id = worker.new_id()
    answer = await worker.expect("s1", request_id)
    await worker.acquire("s1")  # a cancellable request of the same session
    assert bus.subscriptions == 1
    await other.deliver("s1", Response(request_id, result={"ok": True}))
    await other.cancel("s1", {"requestId": 3})
    response, answered_in = await asyncio.wait_for(answer, 5)
    assert response.result == {"ok": True} and answered_in == {}  # tracing is off
    await asyncio.wait_for(reached.wait(), 5)
    await worker.release("s1", request_id)
    assert "s1" in worker._listeners
    await worker.release("s1")
    assert worker._listeners == {}


def _worker(bus: MemoryBus, provider: MemoryProvider) -> tuple[Any, FakeRuntime]:
    server = make_server(provider)
    rt = FakeRuntime()
    rt.pending = PendingRequests(bus, on_cancel=server.cancel)
    return server, rt


async def test_a_slow_silent_request_on_one_worker_is_cancelled_from_another_without_a_response() -> None:
    bus, provider = CountingBus(), MemoryProvider()
    started = asyncio.Event()

    async def wait_forever(arguments: dict[str, Any], ctx: Context) -> dict[str, Any]:
        started.set()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    provider.add_tool(Tool("wait", OBJECT), wait_forever)
    server, rt = _worker(bus, provider)
    session = await initialized(server)
    wire = Wire()
    stream = PostStream(rt, session, wire.send, wire.receive)  # type: ignore[arg-type]
    message = Request(5, "tools/call", {"name": "wait", "arguments": {}})
    running = asyncio.ensure_future(stream.run(server.handle(message, session, stream)))
    await asyncio.wait_for(bus.subscribed.wait(), 5)  # listening once it has run for a while
    await PendingRequests(bus).cancel(session.id, {"requestId": 5})
    assert await asyncio.wait_for(running, 5) is None
    await stream.finish([])
    await stream.close()  # as the endpoint does after every POST
    # No response is ever sent: an event stream that ends with no event ([L] transports.mdx: a
    # POSTed request gets JSON or SSE, 202 is only for notifications and responses).
    assert wire.sent[0]["status"] == 200 and wire.body == b""
    assert dict(wire.sent[0]["headers"])[b"content-type"] == b"text/event-stream"
    assert rt.pending._listeners == {} and server.in_flight() == 0


async def test_a_streaming_request_listens_before_its_first_event_and_a_fast_one_never() -> None:
    bus, provider = CountingBus(), MemoryProvider()

    async def report_then_wait(arguments: dict[str, Any], ctx: Context) -> dict[str, Any]:
        await ctx.report_progress(1, 2)
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    async def quick(arguments: dict[str, Any], ctx: Context) -> dict[str, Any]:
        return {"content": []}

    provider.add_tool(Tool("report", OBJECT), report_then_wait)
    provider.add_tool(Tool("quick", OBJECT), quick)
    server, rt = _worker(bus, provider)
    session = await initialized(server)

    wire = Wire()
    stream = PostStream(rt, session, wire.send, wire.receive)  # type: ignore[arg-type]
    result = await stream.run(server.handle(Request(1, "tools/call", {"name": "quick"}), session, stream))
    await stream.finish([result] if result else [])
    assert wire.sent[0]["status"] == 200 and bus.subscriptions == 0

    wire = Wire()
    stream = PostStream(rt, session, wire.send, wire.receive)  # type: ignore[arg-type]
    message = Request(2, "tools/call", {"name": "report", "_meta": {"progressToken": "p"}})
    running = asyncio.ensure_future(stream.run(server.handle(message, session, stream)))
    await wire.until(b"notifications/progress")
    assert bus.subscriptions == 1  # subscribed before the client could see anything
    await PendingRequests(bus).cancel(session.id, {"requestId": 2})
    assert await asyncio.wait_for(running, 5) is None
    await stream.finish([])
    assert b'"id":2' not in wire.body.replace(b" ", b"")
    assert rt.pending._listeners == {}
