"""Virtual servers at ``/mcp/<slug>`` (issue 39 items 2 and 3), in-process through the project's
routing (``EndpointFirst`` + Channels' ``URLRouter``) on memory backends, with a ``MemoryProvider``
whose snapshot carries two ``EndpointSpec``s: each endpoint is its own server (``serverInfo``,
``instructions``, lists, cursors), a slug names an enabled server or the path is a 404 before auth,
and a session belongs to the endpoint that made it."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from django.db.models import QuerySet
from django.test import override_settings

from mcp_django.checks import check_default_server, check_mcp_settings
from mcp_django.conf import mcp_settings
from mcp_django.service import get_service
from mcp_protocol.endpoints import SCOPE_KEY, EndpointSpec, Selection
from mcp_protocol.transports import metrics
from mcp_protocol.transports.http import MCPEndpoint
from tests.support.asgi_call import JSON_POST, MEMORY_MCP, Headers, Reply, call
from tests.support.virtual_servers import initialize, project, rpc, session_on

A = EndpointSpec(
    slug="a",
    name="server-a",
    version="2.0.0",
    title="Server A",
    description="The A team's tools",
    instructions="Use A for echoes.",
    icons=({"src": "https://a.example/icon.png", "mimeType": "image/png"},),
    website_url="https://a.example",
    selection=Selection.of(tools={"echo", "add"}, resources={"demo://readme"}),
)
B = EndpointSpec(
    slug="b", name="server-b", instructions="B counts.", selection=Selection.of(tools={"countdown"})
)
MODERN = "2026-07-28"


@pytest.fixture
async def served() -> AsyncIterator[None]:
    with override_settings(MCP={**MEMORY_MCP, "PAGE_SIZE": 1}):
        mcp_settings.backend("PROVIDER").set_endpoints([A, B])
        try:
            yield
        finally:
            await get_service().shutdown()


def modern(
    method: str, params: dict[str, Any] | None = None, name: str | None = None
) -> tuple[bytes, Headers]:
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
    }
    headers = [*JSON_POST, (b"mcp-protocol-version", MODERN.encode()), (b"mcp-method", method.encode())]
    if name is not None:
        headers.append((b"mcp-name", name.encode()))
    return rpc(method, {**(params or {}), "_meta": meta}), headers


async def listed(app: Any, path: str, headers: Headers) -> list[str]:
    names, cursor = [], None
    while True:
        reply = await call(app, rpc("tools/list", {"cursor": cursor} if cursor else {}), headers, path=path)
        result = reply.messages()[0]["result"]
        names += [tool["name"] for tool in result["tools"]]
        cursor = result.get("nextCursor")
        if not cursor:
            return names


# -- each endpoint is its own server ---------------------------------------------------------------
async def test_initialize_answers_with_the_endpoints_server_info_and_instructions(served: None) -> None:
    app = project()
    reply, _ = await session_on(app, "/mcp/a")
    result = reply.json()["result"]
    assert result["serverInfo"] == {
        "name": "server-a", "version": "2.0.0", "title": "Server A", "description": "The A team's tools",
        "icons": [dict(A.icons[0])], "websiteUrl": "https://a.example",  # type: ignore[index]
    }
    assert result["instructions"] == "Use A for echoes."
    # Shaped per revision (versions.implementation_to_wire): 2025-03-26 has neither title nor icons.
    old, _ = await session_on(app, "/mcp/a/", "2025-03-26")
    assert old.json()["result"]["serverInfo"] == {"name": "server-a", "version": "2.0.0"}
    other, _ = await session_on(app, "/mcp/b")
    assert other.json()["result"]["serverInfo"]["name"] == "server-b"
    assert other.json()["result"]["instructions"] == "B counts."
    whole, _ = await session_on(app, "/mcp")
    assert whole.json()["result"]["serverInfo"]["name"] == mcp_settings.SERVER_NAME


async def test_discover_and_stateless_results_carry_the_endpoints_info(served: None) -> None:
    app = project()
    body, headers = modern("server/discover")
    result = (await call(app, body, headers, path="/mcp/a")).messages()[0]["result"]
    assert result["instructions"] == "Use A for echoes."
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "server-a"
    body, headers = modern("tools/list")
    result = (await call(app, body, headers, path="/mcp/b")).messages()[0]["result"]
    assert [t["name"] for t in result["tools"]] == ["countdown"]
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "server-b"
    whole = (await call(app, body, headers, path="/mcp")).messages()[0]["result"]
    assert whole["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == mcp_settings.SERVER_NAME


async def test_lists_show_the_selection_and_a_tool_outside_it_is_unknown(served: None) -> None:
    app = project()
    _, a = await session_on(app, "/mcp/a")
    assert await listed(app, "/mcp/a", a) == ["echo", "add"]
    _, whole = await session_on(app, "/mcp")
    assert len(await listed(app, "/mcp", whole)) > 3
    outside = await call(app, rpc("tools/call", {"name": "countdown", "arguments": {}}), a, path="/mcp/a")
    missing = await call(app, rpc("tools/call", {"name": "no-such-tool", "arguments": {}}), a, path="/mcp/a")
    # Exactly as unknown as a tool that does not exist: same code, same message but the name.
    error, absent = outside.messages()[0]["error"], missing.messages()[0]["error"]
    assert error["code"] == absent["code"]
    assert error["message"].replace("countdown", "X") == absent["message"].replace("no-such-tool", "X")
    echo = rpc("tools/call", {"name": "echo", "arguments": {"message": "hi"}})
    inside = await call(app, echo, a, path="/mcp/a")
    assert inside.messages()[0]["result"]["content"][0]["text"] == "hi"
    # Resources and prompts are selected too: a has the readme and no prompt.
    resources = await call(app, rpc("resources/list"), a, path="/mcp/a")
    assert [r["uri"] for r in resources.messages()[0]["result"]["resources"]] == ["demo://readme"]
    prompts = await call(app, rpc("prompts/list"), a, path="/mcp/a")
    assert prompts.messages()[0]["result"]["prompts"] == []


async def test_a_cursor_of_one_endpoint_is_refused_on_another(served: None) -> None:
    app = project()
    _, a = await session_on(app, "/mcp/a")
    _, b = await session_on(app, "/mcp/b")
    first = (await call(app, rpc("tools/list"), a, path="/mcp/a")).messages()[0]["result"]
    cursor = first["nextCursor"]  # PAGE_SIZE 1: a's two tools take two pages
    on_a = await call(app, rpc("tools/list", {"cursor": cursor}), a, path="/mcp/a")
    assert [t["name"] for t in on_a.messages()[0]["result"]["tools"]] == ["add"]
    on_b = await call(app, rpc("tools/list", {"cursor": cursor}), b, path="/mcp/b")
    assert on_b.messages()[0]["error"]["code"] == -32602


# -- routing ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("path", ["/mcp/nope", "/mcp/nope/", "/mcp/c"])
@pytest.mark.parametrize("method", ["POST", "GET", "DELETE"])
async def test_an_unknown_or_disabled_slug_is_a_404_with_a_json_rpc_body(
    served: None, path: str, method: str
) -> None:
    # "c" is a server the registry has but disabled: not in the snapshot, so as unknown as "nope".
    reply = await call(project(), initialize(), method=method, path=path)
    assert reply.status == 404
    body = reply.json()
    assert body["jsonrpc"] == "2.0" and body["error"]["code"] < 0
    assert "no MCP server" in body["error"]["message"]


async def test_the_slug_is_resolved_before_the_caller(served: None) -> None:
    """Unknown slug: 404 without asking who calls. Known: the resolver sees the spec in the scope."""
    seen: list[Any] = []

    def resolver(scope: Any) -> str:
        seen.append(scope.get(SCOPE_KEY, "unset"))
        return "alice"

    app = project(endpoint=MCPEndpoint(get_service(), resolver))
    assert (await call(app, initialize(), path="/mcp/nope")).status == 404
    assert seen == []
    assert (await call(app, initialize(), path="/mcp/a")).status == 200
    assert (await call(app, initialize(), path="/mcp")).status == 200
    assert seen == [A, None]


async def test_paths_below_an_endpoint_and_through_the_router_are_routed(served: None) -> None:
    app = project()
    for path in ("/mcp/a/server-card", "/mcp/a/b/c", "/mcp/Bad!"):
        assert (await call(app, initialize(), path=path)) == Reply(299, {}, path.encode())
    # Under a root_path EndpointFirst steps aside: Channels' router finds the slug itself.
    routed = await call(app, initialize(), path="/app/mcp/a", root_path="/app")
    assert routed.status == 200 and routed.json()["result"]["serverInfo"]["name"] == "server-a"


async def test_a_default_server_is_what_mcp_serves_and_off_turns_it_off(served: None) -> None:
    app = project(default="a")
    reply, headers = await session_on(app, "/mcp")
    assert reply.json()["result"]["serverInfo"]["name"] == "server-a"
    assert await listed(app, "/mcp", headers) == ["echo", "add"]
    assert await listed(app, "/mcp/a", headers) == ["echo", "add"]  # the same server: its session
    assert (await call(app, rpc("ping"), headers, path="/mcp/b")).status == 404
    off = project(default="off")
    for method in ("POST", "GET", "DELETE"):
        refused = await call(off, initialize(), method=method, path="/mcp")
        assert refused.status == 404 and "error" in refused.json()
    assert (await call(off, initialize(), path="/mcp/b")).status == 200
    gone = project(default="zzz")  # a default naming no server: /mcp is a 404 too
    assert (await call(gone, initialize(), path="/mcp")).status == 404


# -- sessions belong to their endpoint -------------------------------------------------------------
async def test_a_session_is_unknown_on_any_other_endpoint(served: None) -> None:
    app = project()
    _, a = await session_on(app, "/mcp/a")
    _, whole = await session_on(app, "/mcp")
    for path, headers in (("/mcp/b", a), ("/mcp", a), ("/mcp/a", whole)):
        posted = await call(app, rpc("ping"), headers, path=path)
        stream = [*headers, (b"accept", b"text/event-stream")]
        streamed = await call(app, b"", stream, method="GET", path=path)
        resumed = await call(
            app, b"", [*headers, (b"accept", b"text/event-stream"), (b"last-event-id", b"0-1")],
            method="GET", path=path,
        )
        deleted = await call(app, b"", headers, method="DELETE", path=path)
        for reply in (posted, streamed, resumed, deleted):
            assert reply.status == 404 and reply.json()["error"]["message"] == "Session not found"
    # Still alive on its own endpoint after all that.
    assert (await call(app, rpc("ping"), a, path="/mcp/a")).messages()[0]["result"] == {}
    assert (await call(app, b"", a, method="DELETE", path="/mcp/a")).status == 200


async def test_legacy_sse_messages_of_one_endpoint_are_refused_on_another(served: None) -> None:
    """The POST half of /sse/<slug>: a session is only found under its own slug (the stream half,
    which never ends by itself, runs against a real server in tests/integration)."""
    app = project()
    reply, _ = await session_on(app, "/mcp/b")
    session_id = reply.headers[b"mcp-session-id"].decode()
    assert (await message_to(app, "/messages/a", session_id)).status == 404
    assert (await message_to(app, "/messages", session_id)).status == 404
    assert (await message_to(app, "/messages/b", session_id)).status == 202
    assert (await message_to(app, "/messages/nope", session_id)).status == 404


async def message_to(app: Any, path: str, session_id: str) -> Reply:
    """POST a notification to the legacy transport's ``path?session_id=…``."""
    body = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode()

    async def with_query(scope: Any, receive: Any, send: Any) -> None:
        await app({**scope, "query_string": f"session_id={session_id}".encode()}, receive, send)

    return await call(with_query, body, path=path)


# -- the endpoint's server, built once per spec ----------------------------------------------------
async def test_an_endpoint_server_is_made_once_per_spec_and_bounded(served: None) -> None:
    app = project()
    await session_on(app, "/mcp/a")
    rt = get_service().current()
    assert rt is not None
    views = rt.endpoint_runtimes
    first = views.get(A)
    assert views.get(A) is first and first.server.endpoint_key == "a"
    # Shared with the base: the in-flight table, the change feed; not the wire cache or cursors.
    assert first.server.inflight is rt.server.inflight and first.server.feed is rt.server.feed
    assert first.server.wire_cache is not rt.server.wire_cache
    renamed = EndpointSpec(slug="a", name="renamed", selection=A.selection)
    assert views.get(renamed).server.name == "renamed" and views.get(renamed) is not first
    equal = EndpointSpec(slug="a", name="renamed", selection=A.selection)  # a new snapshot's copy
    assert views.get(equal).server is views.get(renamed).server
    views.servers.limit = 3
    for n in range(10):
        views.get(EndpointSpec(slug=f"s{n}", name=f"s{n}"))
    assert len(views.servers) <= 3


def test_the_server_label_is_bounded() -> None:
    saved = dict(metrics._server_labels)
    metrics._server_labels.clear()
    try:
        specs = [EndpointSpec(slug=f"s{n}", name="x") for n in range(metrics.MAX_SERVER_LABELS + 5)]
        labels = [metrics.server_label(spec) for spec in specs]
        assert labels[: metrics.MAX_SERVER_LABELS] == [f"s{n}" for n in range(metrics.MAX_SERVER_LABELS)]
        assert set(labels[metrics.MAX_SERVER_LABELS :]) == {metrics.OTHER_SERVERS}
        assert metrics.server_label(EndpointSpec(slug="s0", name="x")) == "s0"  # kept for good
        assert metrics.server_label(None) == metrics.CATCH_ALL_LABEL
    finally:
        metrics._server_labels.clear()
        metrics._server_labels.update(saved)


async def test_requests_are_counted_per_server(served: None) -> None:
    app = project()
    before = dict(metrics._tally.requests)
    await session_on(app, "/mcp/a")
    await session_on(app, "/mcp")
    grew = {k: v - before.get(k, 0) for k, v in metrics._tally.requests.items() if v != before.get(k, 0)}
    assert grew == {
        ("POST", "initialize", "200", "legacy", "a"): 1,
        ("POST", "initialize", "200", "legacy", ""): 1,
    }


# -- the setting's checks --------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("value", "ids"), [("a", []), ("off", []), (None, []), ("Bad slug!", ["mcp.E013"]), (3, ["mcp.E013"])]
)
def test_the_default_server_setting_is_checked(value: Any, ids: list[str]) -> None:
    with override_settings(MCP={"DEFAULT_SERVER": value}):
        assert [m.id for m in check_mcp_settings() if m.id == "mcp.E013"] == ids


@pytest.mark.django_db
def test_the_database_check_warns_of_a_default_naming_no_enabled_server() -> None:
    from registry.models import VirtualServer

    with override_settings(MCP={"DEFAULT_SERVER": "support"}):
        assert check_default_server() == []  # no database asked for: Django's default
        assert [m.id for m in check_default_server(databases=["default"])] == ["mcp.W012"]
        # Django's own QuerySet: the row alone, without the registry's change publishing (not
        # this test's subject).
        rows = QuerySet(model=VirtualServer)
        rows.bulk_create([VirtualServer(slug="support", name="Support", enabled=False)])
        assert [m.id for m in check_default_server(databases=["default"])] == ["mcp.W012"]
        rows.filter(slug="support").update(enabled=True)
        assert check_default_server(databases=["default"]) == []
