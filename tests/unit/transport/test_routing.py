"""Mounting the endpoint through Channels (mcp_django/routing.py): any prefix, behind any
``root_path``, beside the project's other routes; the lifespan app; and the system check that
says when ``ASGI_APPLICATION`` routes no endpoint. In-process ASGI calls are enough here: what is
tested is which app a path reaches, not streaming (the live-server tests cover that)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from channels.routing import ProtocolTypeRouter, URLRouter
from django.test import override_settings
from django.urls import URLPattern, re_path

from mcp_django.checks import check_mcp_routing
from mcp_django.routing import EndpointFirst, ExactPath, find_endpoints, lifespan, mcp_path
from mcp_django.service import get_service
from mcp_protocol.transports.http import MCPEndpoint
from tests.support.asgi_call import post

MEMORY = {"PROVIDER": {"BACKEND": "mcp_protocol.memory_provider.MemoryProvider", "OPTIONS": {}}}


async def fallback(scope: Any, receive: Any, send: Any) -> None:
    """Stands in for Django's handler: answers 299 so a test sees the request went past /mcp."""
    await send({"type": "http.response.start", "status": 299, "headers": []})
    await send({"type": "http.response.body", "body": scope["path"].encode()})


async def websocket_app(scope: Any, receive: Any, send: Any) -> None:
    await send({"type": "websocket.close"})


def project(route: str = "internal/mcp") -> ProtocolTypeRouter:
    return ProtocolTypeRouter(
        {
            "http": URLRouter([mcp_path(route), re_path(r"", fallback)]),
            "websocket": URLRouter([re_path(r"^ws/echo/$", websocket_app)]),
            "lifespan": lifespan,
        }
    )


@pytest.fixture
async def memory_runtime() -> AsyncIterator[None]:
    with override_settings(MCP=MEMORY):
        try:
            yield
        finally:
            await get_service().shutdown()


@pytest.mark.parametrize(
    ("path", "root_path"),
    [
        ("/internal/mcp", ""),
        ("/internal/mcp/", ""),
        ("/app/internal/mcp", "/app"),
    ],
)
async def test_the_endpoint_answers_at_its_prefix_behind_any_root_path(
    memory_runtime: None, path: str, root_path: str
) -> None:
    status, headers, body = await post(project(), path, root_path)
    assert status == 200 and b"mcp-session-id" in headers
    assert json.loads(body)["result"]["protocolVersion"] == "2025-11-25"


@pytest.mark.parametrize("path", ["/mcp", "/internal/mcp/x", "/internal/mcpx", "/internal"])
async def test_other_paths_go_to_the_project(memory_runtime: None, path: str) -> None:
    status, _, body = await post(project(), path)
    assert (status, body) == (299, path.encode())


async def test_a_nested_router_mounts_the_endpoint_under_its_own_prefix(memory_runtime: None) -> None:
    app = URLRouter([re_path(r"^tenant/", URLRouter([mcp_path("mcp")])), re_path(r"", fallback)])
    assert (await post(app, "/tenant/mcp"))[0] == 200
    assert (await post(app, "/mcp"))[0] == 299


def test_a_route_needs_a_path_and_one_principal_resolver() -> None:
    with pytest.raises(ValueError, match="non-empty"):
        mcp_path("/")
    with pytest.raises(ValueError, match="not both"):
        mcp_path("mcp", MCPEndpoint(get_service()), resolve_principal=lambda scope: "x")
    resolver = mcp_path("mcp", resolve_principal=lambda scope: "alice").callback
    assert isinstance(resolver, MCPEndpoint) and resolver.resolve_principal({}) == "alice"


async def test_lifespan_completes_startup_and_shutdown() -> None:
    incoming = iter([{"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}])
    sent: list[str] = []

    async def receive() -> dict[str, Any]:
        return next(incoming)

    async def send(message: dict[str, Any]) -> None:
        sent.append(message["type"])

    await lifespan({"type": "lifespan"}, receive, send)
    assert sent == ["lifespan.startup.complete", "lifespan.shutdown.complete"]


def test_the_walk_finds_the_endpoint_of_this_project() -> None:
    from mcpsite.asgi import application

    assert len(list(find_endpoints(application))) == 1
    assert check_mcp_routing() == []


unrouted = ProtocolTypeRouter({"http": URLRouter([re_path(r"", fallback)])})


@pytest.mark.parametrize(
    ("asgi_application", "expected"),
    [
        (None, "mcp.W010"),
        ("tests.unit.transport.test_routing.unrouted", "mcp.W011"),
        ("tests.unit.transport.nowhere.application", "mcp.E010"),
    ],
)
def test_the_check_names_a_missing_route(asgi_application: str | None, expected: str) -> None:
    with override_settings(ASGI_APPLICATION=asgi_application):
        messages = check_mcp_routing()
    assert [m.id for m in messages] == [expected]
    assert expected == "mcp.E010" or "mcp_path" in (messages[0].hint or "")


urlpatterns = [mcp_path("mcp")]  # the mistake the check catches: the endpoint as a Django view


def test_the_check_names_an_endpoint_put_in_the_urlconf() -> None:
    with override_settings(ROOT_URLCONF="tests.unit.transport.test_routing"):
        messages = check_mcp_routing()
    assert [m.id for m in messages] == ["mcp.E011"]
    assert "ASGI routing" in (messages[0].hint or "")


async def test_endpoint_first_skips_the_router_only_for_the_endpoints_own_path() -> None:
    """``EndpointFirst``: ``/mcp`` and ``/mcp/`` reach the endpoint with the server's scope itself
    (no ``url_route`` copy from Channels); any other path, a ``root_path`` mount and non-HTTP
    scopes go through the router, which routes the same endpoint."""
    seen: list[tuple[str, dict[str, Any]]] = []

    async def endpoint(scope: dict[str, Any], receive: Any, send: Any) -> None:
        seen.append(("endpoint", scope))

    async def other(scope: dict[str, Any], receive: Any, send: Any) -> None:
        seen.append(("other", scope))

    route = URLPattern(ExactPath("mcp"), endpoint)
    app = EndpointFirst(ProtocolTypeRouter({"http": URLRouter([route, re_path(r"", other)])}), route)

    def scope(path: str, root_path: str = "") -> dict[str, Any]:
        return {"type": "http", "path": path, "root_path": root_path, "method": "POST", "headers": []}

    direct = scope("/mcp")
    for sent in (direct, scope("/mcp/"), scope("/api/mcp"), scope("/app/mcp", "/app"), scope("/mcpx")):
        await app(sent, None, None)
    assert [name for name, _ in seen] == ["endpoint", "endpoint", "other", "endpoint", "other"]
    assert seen[0][1] is direct  # the server's own scope: nothing copied
    assert "url_route" in seen[3][1]  # under a root_path: routed by Channels, as before
