"""The one mapping from a change to its notifications (mcp_protocol/fanout/notifications.py), as
stdio, the HTTP fan-out, subscriptions/listen and key-scope changes all ask it."""

from __future__ import annotations

from mcp_protocol.changefeed import EVERYTHING
from mcp_protocol.fanout.notifications import KINDS, Audience, Change, deliveries, notifications
from mcp_protocol.provider import ProviderCapabilities
from mcp_protocol.session import Session

CAPS = ProviderCapabilities()


def ready(principal: str | None = None, subscriptions: set[str] | None = None) -> Session:
    session = Session.create(principal)
    session.state, session.protocol_version = "ready", "2025-11-25"
    session.subscriptions = subscriptions or set()
    return session


def test_a_registry_change_is_its_list_changed_and_updated_for_the_subscribed_uris_only() -> None:
    change = Change.of({"id": "1", "kind": "resources", "uris": ["demo://a", "demo://b"]})
    assert notifications(change, CAPS, Audience.of_session(ready(subscriptions={"demo://b"}))) == [
        ("notifications/resources/list_changed", None),
        ("notifications/resources/updated", {"uri": "demo://b"}),
    ]


def test_a_session_not_initialized_or_of_2026_07_28_hears_nothing_on_its_own_stream() -> None:
    change = Change.of({"kind": "tools", "uris": []})
    modern = ready()
    modern.protocol_version = "2026-07-28"
    assert notifications(change, CAPS, Audience.of_session(Session.create())) == []
    assert notifications(change, CAPS, Audience.of_session(modern)) == []


def test_a_grant_change_is_every_list_changed_for_the_sessions_of_that_key_only() -> None:
    change = Change.of_grant({"key:1"})
    expected = [(f"notifications/{kind}/list_changed", None) for kind in KINDS]
    assert notifications(change, CAPS, Audience.of_session(ready("key:1"))) == expected
    assert notifications(change, CAPS, Audience.of_session(ready("key:2"))) == []


def test_what_the_server_did_not_declare_is_never_notified() -> None:
    caps = ProviderCapabilities(prompts=False, resources_subscribe=False)
    change = Change.of(EVERYTHING)
    assert [d.method for d in deliveries(Change.of_grant({"k"}), caps)] == [
        "notifications/tools/list_changed", "notifications/resources/list_changed"]
    assert deliveries(change, ProviderCapabilities(list_changed=False)) == []


def test_a_lost_bus_tells_a_listen_stream_everything_it_asked_about() -> None:
    audience = Audience(("prompts",), ("demo://z", "demo://a"))
    assert notifications(Change.of(EVERYTHING), CAPS, audience) == [
        ("notifications/prompts/list_changed", None),
        ("notifications/resources/updated", {"uri": "demo://z"}),
        ("notifications/resources/updated", {"uri": "demo://a"}),
    ]
