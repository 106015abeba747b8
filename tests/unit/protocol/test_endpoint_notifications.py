"""Fan-out per endpoint in the one mapping from a change to its notifications
(mcp_protocol/fanout/notifications.py), in the listen feed (changefeed.py) and on a 2026-07-28
``subscriptions/listen`` stream (issue 39 item 4): a change naming endpoints reaches only their
recipients; one naming none reaches all; a virtual server's change is every list of its endpoint."""

from __future__ import annotations

import asyncio

from mcp_protocol.changefeed import EVERYTHING, ChangeFeed
from mcp_protocol.endpoints import CATCH_ALL, reaches
from mcp_protocol.fanout.notifications import KINDS, SERVERS, Audience, Change, notifications
from mcp_protocol.provider import ProviderCapabilities
from mcp_protocol.session import Session

from .conftest import make_server
from .test_subscriptions import SUB, open_listen, settle

CAPS = ProviderCapabilities()
EVERY_LIST = [(f"notifications/{kind}/list_changed", None) for kind in KINDS]


def ready_on(endpoint: str, subscriptions: set[str] | None = None) -> Audience:
    session = Session.create("key:1", endpoint=endpoint)
    session.state, session.protocol_version = "ready", "2025-11-25"
    session.subscriptions = subscriptions or set()
    return Audience.of_session(session)


def test_a_message_names_the_endpoints_its_change_reaches_and_without_them_it_reaches_all() -> None:
    named = {"id": 1, "kind": "tools", "uris": [], "endpoints": ["a", CATCH_ALL]}
    assert Change.of(named) == Change(("tools",), endpoints=frozenset({"a", ""}))
    assert Change.of({"kind": "tools", "uris": []}).endpoints is None
    assert Change.of({"kind": "tools", "endpoints": "a"}).endpoints is None  # not a list: all
    for key in ("a", "b", CATCH_ALL):  # the same answer as endpoints.reaches on the raw message
        assert Change.of(named).reaches(key) == reaches(named, key)
    assert not Change.of({"kind": "tools", "endpoints": []}).reaches(CATCH_ALL)


def test_a_change_reaches_only_the_sessions_of_the_endpoints_it_names() -> None:
    change = Change.of({"kind": "resources", "uris": ["demo://a"], "endpoints": ["a", CATCH_ALL]})
    heard = [("notifications/resources/list_changed", None),
             ("notifications/resources/updated", {"uri": "demo://a"})]
    assert notifications(change, CAPS, ready_on("a", {"demo://a"})) == heard
    assert notifications(change, CAPS, ready_on(CATCH_ALL, {"demo://a"})) == heard
    assert notifications(change, CAPS, ready_on("b", {"demo://a"})) == []
    unnamed = Change.of({"kind": "resources", "uris": ["demo://a"]})
    assert notifications(unnamed, CAPS, ready_on("b", {"demo://a"})) == heard


def test_a_virtual_servers_change_is_every_list_changed_for_its_endpoints_only() -> None:
    change = Change.of({"id": 9, "kind": SERVERS, "uris": [], "endpoints": ["b"]})
    assert change.kinds == KINDS and not change.every_uri
    assert notifications(change, CAPS, ready_on("b")) == EVERY_LIST
    assert notifications(change, CAPS, ready_on("a")) == []
    assert notifications(change, CAPS, ready_on(CATCH_ALL)) == []
    everything_on_b = Change.of({**EVERYTHING, "endpoints": ["b"]})
    assert notifications(everything_on_b, CAPS, ready_on("b", {"demo://x"}))[:3] == EVERY_LIST
    assert notifications(everything_on_b, CAPS, ready_on("a", {"demo://x"})) == []


def test_a_grant_change_reaches_the_keys_sessions_on_every_endpoint() -> None:
    change = Change.of_grant({"key:1"})
    for endpoint in ("a", "b", CATCH_ALL):
        assert notifications(change, CAPS, ready_on(endpoint)) == EVERY_LIST


def test_the_feed_hands_a_change_only_to_the_subscriptions_of_the_endpoints_it_reaches() -> None:
    feed = ChangeFeed()
    on_a, on_b, on_all = feed.subscribe("p", "a"), feed.subscribe("p", "b"), feed.subscribe("p")
    on_catch_all = feed.subscribe("p", CATCH_ALL)
    named = {"kind": "tools", "uris": [], "endpoints": ["a", CATCH_ALL]}
    feed.publish(named)
    feed.publish(EVERYTHING)
    got = {name: [] for name in ("a", "b", "all", "catch_all")}
    for name, subscription in (("a", on_a), ("b", on_b), ("all", on_all), ("catch_all", on_catch_all)):
        while not subscription._queue.empty():
            got[name].append(subscription._queue.get_nowait())
    assert got == {"a": [named, EVERYTHING], "b": [EVERYTHING], "all": [named, EVERYTHING],
                   "catch_all": [named, EVERYTHING]}
    assert len(feed) == 4
    on_b.close()
    assert len(feed) == 3
    feed.end_for({"p"})
    assert len(feed) == 0


async def test_a_listen_stream_on_endpoint_b_does_not_hear_a_change_for_a() -> None:
    server = make_server()
    server.endpoint_key = "b"
    task, outbound = await open_listen(server, {"toolsListChanged": True, "promptsListChanged": True})
    server.feed.publish({"kind": "tools", "uris": [], "endpoints": ["a"]})
    server.feed.publish({"kind": "servers", "uris": [], "endpoints": ["a", CATCH_ALL]})
    server.feed.publish({"kind": "servers", "uris": [], "endpoints": ["b"]})
    server.feed.publish({"kind": "tools", "uris": []})  # names no endpoint: every stream hears it
    await settle()
    assert outbound.notifications[1:] == [
        ("notifications/tools/list_changed", {"_meta": {SUB: 7}}),
        ("notifications/prompts/list_changed", {"_meta": {SUB: 7}}),
        ("notifications/tools/list_changed", {"_meta": {SUB: 7}}),
    ]
    task.cancel()
    await asyncio.wait((task,))
