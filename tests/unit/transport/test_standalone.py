"""Messages for a session's GET stream that belong to no client request (transports/standalone.py),
with the in-memory backends; two ``PendingRequests`` stand for two workers sharing the bus.
[L] basic/transports.mdx "Listening for Messages from the Server"."""

from __future__ import annotations

import asyncio

import pytest

from mcp_protocol.bus.memory import MemoryBus
from mcp_protocol.errors import ClientRequestError
from mcp_protocol.jsonrpc import Response
from mcp_protocol.session import Session
from mcp_protocol.stores.events import STANDALONE_STREAM
from mcp_protocol.stores.memory import MemoryEventStore
from mcp_protocol.transports.pending import PendingRequests
from mcp_protocol.transports.standalone import StandaloneOutbound


def session_with(**capabilities: dict[str, object]) -> Session:
    session = Session.create()
    session.client_capabilities = dict(capabilities)
    return session


async def test_a_notification_is_appended_to_the_sessions_standalone_log() -> None:
    events, session = MemoryEventStore(), session_with()
    listener = events.listen(session.id, STANDALONE_STREAM)
    await StandaloneOutbound(events, PendingRequests(MemoryBus()), session).notify(
        "notifications/message", {"level": "info", "data": "hello"})
    event = await asyncio.wait_for(anext(listener), 5)
    assert event.message == {"jsonrpc": "2.0", "method": "notifications/message",
                             "params": {"level": "info", "data": "hello"}}
    await listener.aclose()  # type: ignore[attr-defined]


async def test_a_request_answered_through_another_worker_returns_its_result() -> None:
    events, bus, session = MemoryEventStore(), MemoryBus(), session_with(roots={})
    here, there = PendingRequests(bus), PendingRequests(bus)
    listener = events.listen(session.id, STANDALONE_STREAM)
    asking = asyncio.ensure_future(
        StandaloneOutbound(events, here, session).request("roots/list", None, timeout=5))
    sent = (await asyncio.wait_for(anext(listener), 5)).message
    assert sent["method"] == "roots/list" and "id" in sent
    await there.deliver(session.id, Response(sent["id"], result={"roots": [{"uri": "file:///w"}]}))
    assert await asyncio.wait_for(asking, 5) == {"roots": [{"uri": "file:///w"}]}
    assert here._listeners == {}  # the session's channel is given back
    await listener.aclose()  # type: ignore[attr-defined]


async def test_a_request_needs_the_clients_capability_and_an_answer_in_time() -> None:
    events, pending = MemoryEventStore(), PendingRequests(MemoryBus())
    with pytest.raises(ClientRequestError, match="sampling"):
        await StandaloneOutbound(events, pending, session_with()).request(
            "sampling/createMessage", {}, timeout=5)
    with pytest.raises(ClientRequestError, match="no response"):
        await StandaloneOutbound(events, pending, session_with(roots={})).request(
            "roots/list", None, timeout=0.05)
    assert pending._listeners == {}
