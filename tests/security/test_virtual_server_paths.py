"""An attacker against the virtual servers' routes (``/mcp/<slug>``, ``/sse/<slug>``,
``/messages/<slug>``; docs/security.md "Virtual servers"):

- hostile slugs never reach a server nor fail: a malformed one is not the endpoint's (it goes on to
  Django), a well-formed unknown one is the endpoint's 404 with a JSON-RPC body; never a 500;
- no existence oracle: a disabled server answers as an unknown one, and a session of another
  endpoint as an unknown session, byte for byte;
- nothing issued by one server opens on another: its cursors and its 2026-07-28 ``requestState``;
- another principal's session is as unknown on the endpoint that made it.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from django.test import override_settings

from mcp_django.conf import mcp_settings
from mcp_django.service import get_service
from mcp_protocol.endpoint_servers import endpoint_server
from mcp_protocol.errors import InvalidParams
from mcp_protocol.request_state import Binding
from mcp_protocol.transports.http import MCPEndpoint
from tests.support.asgi_call import JSON_POST, MEMORY_MCP, call
from tests.support.virtual_servers import A, B, initialize, project, rpc, session_on


@pytest.fixture
async def served() -> AsyncIterator[None]:
    with override_settings(MCP=MEMORY_MCP):
        mcp_settings.backend("PROVIDER").set_endpoints([A, B])
        try:
            yield
        finally:
            await get_service().shutdown()


HOSTILE = [
    "/mcp/..", "/mcp/%2e%2e", "/mcp/../admin/", "/mcp/A", "/mcp/a%00", "/mcp/a\x00", "/mcp/" + "x" * 65,
    "/mcp/é", "/mcp/-a", "/mcp/server-card", "/mcp/off", "/mcp//", "/mcp/a//", "/mcp/a/../b",
    "/sse/..", "/sse/A", "/messages/%2e", "/messages/a/x",
]


@pytest.mark.parametrize("path", HOSTILE)
@pytest.mark.parametrize("method", ["POST", "GET", "DELETE"])
async def test_a_hostile_slug_reaches_no_server_and_never_fails(served: None, path: str, method: str) -> None:
    reply = await call(project(), initialize(), method=method, path=path)
    # 299: the project's next route (Django) got it; 404: the endpoint's, with a JSON-RPC body.
    assert reply.status in (299, 404), (path, reply)
    if reply.status == 404:
        assert reply.json()["jsonrpc"] == "2.0"


async def test_a_disabled_server_and_another_endpoints_session_tell_nothing(served: None) -> None:
    app = project()
    unknown = await call(app, initialize(), path="/mcp/never-was")
    disabled = await call(app, initialize(), path="/mcp/c")  # disabled: left out of the snapshot
    assert (unknown.status, unknown.body) == (disabled.status, disabled.body) == (404, unknown.body)
    _, on_a = await session_on(app, "/mcp/a")
    elsewhere = await call(app, rpc("ping", id=7), on_a, path="/mcp/b")
    forged = [(k, b"0" * 32 if k == b"mcp-session-id" else v) for k, v in on_a]
    made_up = await call(app, rpc("ping", id=7), forged, path="/mcp/b")
    assert (elsewhere.status, elsewhere.body) == (made_up.status, made_up.body)
    assert elsewhere.status == 404


async def test_another_principals_session_is_unknown_on_its_own_endpoint(served: None) -> None:
    def as_header(scope: Any) -> str:
        return dict(scope["headers"]).get(b"x-who", b"alice").decode()

    app = project(endpoint=MCPEndpoint(get_service(), as_header))
    _, alice = await session_on(app, "/mcp/a")
    mallory = [*alice, (b"x-who", b"mallory")]
    stolen = await call(app, rpc("tools/list"), mallory, path="/mcp/a")
    assert stolen.status == 404 and stolen.json()["error"]["message"] == "Session not found"


def test_cursors_and_request_state_of_one_server_do_not_open_on_another(served: None) -> None:
    base = mcp_settings.backend("PROVIDER")
    from mcp_django.conf import build_server

    server = build_server(base)
    on_a, on_b = endpoint_server(server, A), endpoint_server(server, B)
    cursor = on_a.paginator.encode("tools", "echo", 1)
    assert on_a.paginator.decode("tools", cursor) == ("echo", 1)
    for other in (on_b, server):
        with pytest.raises(InvalidParams):
            other.paginator.decode("tools", cursor)
    binding = Binding("anonymous", "tools/call", "echo", "")
    state = on_a.request_state.seal(binding, {"round": 1})
    assert on_a.request_state.open(state, binding) == {"round": 1}
    for other in (on_b, server):
        with pytest.raises(InvalidParams):
            other.request_state.open(state, binding)
    # And the catch-all's own do not open on a server.
    with pytest.raises(InvalidParams):
        on_a.paginator.decode("tools", server.paginator.encode("tools", "echo", 1))


async def test_an_unknown_slug_is_answered_before_the_body_is_read(served: None) -> None:
    """The 404 comes before the body (and the caller) is read: a huge or hostile body costs
    nothing there, and the error has no id to echo (JSON-RPC: null when it was not read)."""
    body = json.dumps({"jsonrpc": "2.0", "id": 41, "method": "ping", "params": {"x": "y" * 100_000}})
    reply = await call(project(), body.encode(), JSON_POST, path="/mcp/nope")
    assert reply.status == 404 and reply.json()["id"] is None
    assert reply.json()["error"]["message"].startswith("Not Found")
