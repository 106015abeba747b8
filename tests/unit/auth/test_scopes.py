"""Grants and the scoped snapshot view (``mcp_protocol/auth/principal.py``, ``scopes.py``), and the
core serving through it: what a grant hides is exactly as unknown as what does not exist."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_protocol.auth import principal as caller
from mcp_protocol.auth.principal import ALL, Grant, Principal, Rate
from mcp_protocol.auth.scopes import granted_uri, view
from mcp_protocol.definitions import Resource, ResourceTemplate, Snapshot, Tool
from mcp_protocol.jsonrpc import Request
from tests.unit.protocol.conftest import RecordingOutbound, initialized, make_server

SNAPSHOT = Snapshot(
    version="v1",
    tools=(Tool("a", {"type": "object"}), Tool("b", {"type": "object"}, tags=("public",)),
           Tool("c", {"type": "object"})),
    resources=(Resource("file:///one", "one"), Resource("file:///two", "two")),
    resource_templates=(ResourceTemplate("users://{id}/profile", "profile"),
                        ResourceTemplate("docs://{+path}", "docs")),
)


def test_a_wildcard_grants_every_definition_of_its_kind() -> None:
    assert Grant.of(tools=["*"], resources=["*"], prompts=["*"]).everything
    assert Grant.from_spec({}) == ALL
    assert Grant.from_spec({"tools": ["a"]}).resources == frozenset()  # named kinds only
    with pytest.raises(ValueError):
        Grant.from_spec({"tool": ["a"]})


def test_a_view_shows_named_and_tagged_definitions_only() -> None:
    grant = Grant.of(tools=["a"], resources=["file:///two"], prompts=[], tags=["public"])
    scoped = view(SNAPSHOT, grant)
    assert [t.name for t in scoped.tools] == ["a", "b"]
    assert [r.uri for r in scoped.resources] == ["file:///two"]
    assert scoped.resource_templates == ()
    assert scoped.version != SNAPSHOT.version  # the wire cache and cursors of two grants never mix
    assert view(SNAPSHOT, grant) is scoped  # cached per (snapshot, grant)
    assert view(SNAPSHOT, ALL) is SNAPSHOT  # open mode pays nothing


def test_union_of_grants() -> None:
    joined = Grant.of(tools=["a"]).union(Grant.of(tools=["b"], prompts=["*"]))
    assert joined.tools == {"a", "b"} and joined.prompts is None


@pytest.mark.parametrize(("uri", "allowed"), [
    ("users://42/profile", True),
    ("users://42/x/profile", False),  # a simple {id} never spans "/"
    ("docs://a/b/c", False),  # template not granted
    ("file:///one", False),  # listed, not granted
    ("file:///nowhere", False),
])
def test_template_generated_uris_follow_their_template(uri: str, allowed: bool) -> None:
    scoped = view(SNAPSHOT, Grant.of(resources=["users://{id}/profile"]))
    assert granted_uri(scoped, SNAPSHOT, uri) is allowed


def test_rate_parsing() -> None:
    assert Rate.parse("60/60") == Rate(60, 1.0)
    assert Rate.parse("") is None and Rate.parse(None) is None
    with pytest.raises(ValueError):
        Rate.parse("0/1")


async def _as(principal: Principal, server: Any, session: Any, method: str, params: dict[str, Any]) -> Any:
    token = caller.bind(principal)
    try:
        return await server.handle(Request(1, method, params), session, RecordingOutbound())
    finally:
        caller.unbind(token)


async def test_the_core_hides_what_the_grant_does_not_name() -> None:
    server = make_server()
    session = await initialized(server)
    names = [t.name for t in server.provider.snapshot().tools]
    visible, hidden = names[0], names[1]
    scoped = Principal("key:1", Grant.of(tools=[visible], resources=[], prompts=[]))
    listed = await _as(scoped, server, session, "tools/list", {})
    assert [t["name"] for t in listed["result"]["tools"]] == [visible]
    refused = await _as(scoped, server, session, "tools/call", {"name": hidden, "arguments": {}})
    unknown = await _as(scoped, server, session, "tools/call", {"name": "nope", "arguments": {}})
    assert refused["error"]["code"] == unknown["error"]["code"]
    message = unknown["error"]["message"].replace("nope", "X")
    assert refused["error"]["message"].replace(hidden, "X") == message
    assert (await _as(scoped, server, session, "resources/list", {}))["result"]["resources"] == []
    prompts = server.provider.snapshot().prompts
    if prompts:
        ref = {"type": "ref/prompt", "name": prompts[0].name}
        hidden_ref = await _as(scoped, server, session, "completion/complete",
                               {"ref": ref, "argument": {"name": "x", "value": ""}})
        unknown_ref = await _as(scoped, server, session, "completion/complete",
                                {"ref": {**ref, "name": "nope"}, "argument": {"name": "x", "value": ""}})
        assert hidden_ref["error"]["message"].replace(prompts[0].name, "X") == (
            unknown_ref["error"]["message"].replace("nope", "X"))
    full = await _as(caller.ANONYMOUS, server, session, "tools/list", {})
    assert len(full["result"]["tools"]) == len(names)


async def test_a_subscription_outside_the_grant_is_accepted_but_not_kept() -> None:
    server = make_server()
    session = await initialized(server)
    uri = server.provider.snapshot().resources[0].uri
    nothing = Principal("key:1", Grant.of(tools=[], resources=[], prompts=[]))
    assert (await _as(nothing, server, session, "resources/subscribe", {"uri": uri}))["result"] == {}
    assert uri not in session.subscriptions
    assert (await _as(caller.ANONYMOUS, server, session, "resources/subscribe", {"uri": uri}))["result"] == {}
    assert uri in session.subscriptions
