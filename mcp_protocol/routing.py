"""Mount the MCP endpoint in a project's Channels routing, at any path it chooses.

    from channels.routing import ProtocolTypeRouter, URLRouter
    from django.urls import re_path
    from mcp_protocol.routing import lifespan, mcp_path

    application = ProtocolTypeRouter({
        "http": URLRouter([mcp_path("internal/mcp"), re_path(r"", django_asgi_app)]),
        "websocket": ...,          # the project's own consumers, unchanged
        "lifespan": lifespan,      # uvicorn: closes the MCP runtime on shutdown
    })

Owns the route (a Django ``re_path`` that Channels' ``URLRouter`` matches) and the ``lifespan``
application; the endpoint itself (``transports/http.py``) never looks at ``scope["path"]``, so it
answers wherever it is mounted, behind any ``root_path``. ``find_endpoints`` walks a routing tree
for the system check that says when the endpoint is routed nowhere (``checks.py``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from django.urls import URLPattern, re_path

from .transports import readiness, runtime
from .transports.http import MCPEndpoint, PrincipalResolver
from .transports.legacy_sse import LegacySSEEndpoint
from .transports.responses import Receive, Scope, Send

DEFAULT_ROUTE = "mcp"


def mcp_path(
    route: str = DEFAULT_ROUTE,
    endpoint: MCPEndpoint | None = None,
    *,
    resolve_principal: PrincipalResolver | None = None,
    name: str = "mcp",
) -> URLPattern:
    """A route for ``URLRouter``: the endpoint at ``/<route>`` and ``/<route>/`` (clients are
    configured with either), nothing below it. ``route`` is a plain path (``"internal/mcp"``),
    not a pattern; it is relative to the router it goes into, like any Django route."""
    stripped = route.strip("/")
    if not stripped:
        raise ValueError("mcp_path needs a non-empty route, such as 'mcp'")
    if endpoint is None:
        # No resolver given: the endpoint asks MCP['PRINCIPAL_RESOLVER'] (open mode by default).
        endpoint = MCPEndpoint(resolve_principal)
    elif resolve_principal is not None:
        raise ValueError("pass resolve_principal to the MCPEndpoint, or no endpoint: not both")
    return re_path(rf"^{re.escape(stripped)}/?$", endpoint, name=name)


def legacy_sse_paths(prefix: str = "") -> list[URLPattern]:
    """The deprecated HTTP+SSE transport of 2024-11-05 for old clients (``transports/
    legacy_sse.py``): ``GET <prefix>sse`` and ``POST <prefix>messages?session_id=…``, siblings, as
    the ``endpoint`` event names the POST URL relative to the SSE one."""
    endpoint = LegacySSEEndpoint()
    base = re.escape(prefix.strip("/") + "/") if prefix.strip("/") else ""
    return [
        re_path(rf"^{base}sse/?$", endpoint, name="mcp-legacy-sse"),
        re_path(rf"^{base}messages/?$", endpoint, name="mcp-legacy-messages"),
    ]


readiness.start_under_daphne()  # daphne sends no lifespan: start when its reactor runs


async def lifespan(scope: Scope, receive: Receive, send: Send) -> None:
    """The ASGI ``lifespan`` protocol (uvicorn sends it; daphne does not: the runtime starts and
    closes from reactor triggers there). Startup builds the runtime and subscribes to the bus, so
    the worker fans out changes before its first request (``transports/readiness.py``)."""
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await readiness.startup()
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await runtime.shutdown()
            await send({"type": "lifespan.shutdown.complete"})
            return


def find_endpoints(app: Any, depth: int = 0) -> Iterator[MCPEndpoint]:
    """Every ``MCPEndpoint`` reachable from an ASGI app through Channels' routers (and the
    ``application_mapping`` / ``routes`` / ``app`` / ``inner`` attributes that routers and
    middleware keep), so the check can say the endpoint is routed nowhere."""
    if depth > 20:  # a routing tree is shallow; this only guards against cycles
        return
    if isinstance(app, MCPEndpoint):
        yield app
        return
    children: list[Any] = []
    mapping = getattr(app, "application_mapping", None)
    if isinstance(mapping, dict):
        children.extend(mapping.values())
    routes = getattr(app, "routes", None)
    if isinstance(routes, list | tuple):
        children.extend(getattr(route, "callback", None) for route in routes)
    for attribute in ("inner", "app", "application"):
        child = getattr(app, attribute, None)
        if child is not None and not isinstance(child, type):
            children.append(child)
    for child in children:
        if child is not None:
            yield from find_endpoints(child, depth + 1)
