"""``subscriptions/listen`` in the core (2026-07-28 basic/patterns/subscriptions.mdx; checklist G 42):
acknowledgment first, only what the filter asked, the subscription id on everything, graceful
closure when the server ends it, cancellation when the client leaves."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mcp_protocol.changefeed import EVERYTHING
from mcp_protocol.jsonrpc import Request
from mcp_protocol.memory_provider import MemoryProvider
from mcp_protocol.provider import ProviderCapabilities

from .conftest import RecordingOutbound, make_server, modern_meta

SUB = "io.modelcontextprotocol/subscriptionId"


async def open_listen(server, notifications: dict[str, Any], id: Any = 7):
    outbound = RecordingOutbound()
    params = {"_meta": modern_meta(), "notifications": notifications}
    task = asyncio.create_task(server.handle_stateless(Request(id, "subscriptions/listen", params), outbound))
    for _ in range(50):  # the acknowledgment is sent before any change can be missed
        if outbound.notifications:
            break
        await asyncio.sleep(0)
    return task, outbound


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_acknowledgment_first_then_only_the_asked_notifications_with_the_id():
    server = make_server()
    task, outbound = await open_listen(
        server, {"toolsListChanged": True, "resourceSubscriptions": ["demo://a"]}
    )
    method, params = outbound.notifications[0]
    assert method == "notifications/subscriptions/acknowledged"
    assert params == {
        "_meta": {SUB: 7},
        "notifications": {"toolsListChanged": True, "resourceSubscriptions": ["demo://a"]},
    }
    server.feed.publish({"kind": "prompts", "uris": []})
    server.feed.publish({"kind": "tools", "uris": []})
    server.feed.publish({"kind": "resources", "uris": ["demo://b", "demo://a"]})
    await settle()
    assert outbound.notifications[1:] == [
        ("notifications/tools/list_changed", {"_meta": {SUB: 7}}),
        ("notifications/resources/updated", {"_meta": {SUB: 7}, "uri": "demo://a"}),
    ]
    task.cancel()
    await asyncio.wait((task,))


async def test_unsupported_kinds_are_left_out_of_the_acknowledgment():
    caps = ProviderCapabilities(prompts=False, resources_subscribe=False)
    server = make_server(MemoryProvider(tools=[], capabilities=caps))
    task, outbound = await open_listen(
        server, {"promptsListChanged": True, "toolsListChanged": False, "resourceSubscriptions": ["x://y"]}
    )
    assert outbound.notifications[0][1]["notifications"] == {}
    server.feed.publish(EVERYTHING)
    await settle()
    assert len(outbound.notifications) == 1
    task.cancel()
    await asyncio.wait((task,))


async def test_a_lost_bus_tells_every_stream_that_everything_it_asked_may_have_changed():
    server = make_server()
    task, outbound = await open_listen(
        server, {"promptsListChanged": True, "resourceSubscriptions": ["demo://a"]}
    )
    server.feed.publish(EVERYTHING)
    await settle()
    assert [m for m, _ in outbound.notifications[1:]] == [
        "notifications/prompts/list_changed",
        "notifications/resources/updated",
    ]
    task.cancel()
    await asyncio.wait((task,))


async def test_server_shutdown_ends_the_subscription_with_a_complete_result():
    server = make_server()
    task, _ = await open_listen(server, {"toolsListChanged": True}, id="s1")
    server.feed.close()
    response = await asyncio.wait_for(task, 5)
    assert response is not None and response["id"] == "s1"
    assert response["result"]["resultType"] == "complete" and response["result"]["_meta"][SUB] == "s1"


async def test_cancelling_the_request_ends_the_subscription():
    server = make_server()
    task, _ = await open_listen(server, {"toolsListChanged": True})
    assert len(server.feed) == 1
    task.cancel()
    await asyncio.wait((task,))
    assert len(server.feed) == 0


@pytest.mark.parametrize("bad", [[], {"toolsListChanged": "yes"}, {"resourceSubscriptions": "demo://a"}])
async def test_malformed_filter_gets_32602(bad):
    server = make_server()
    params = {"_meta": modern_meta(), "notifications": bad}
    response = await server.handle_stateless(Request(1, "subscriptions/listen", params), RecordingOutbound())
    assert response is not None and response["error"]["code"] == -32602
