"""Mount the MCP endpoint in a project's Channels routing, at any path it chooses.

    from channels.routing import ProtocolTypeRouter, URLRouter
    from django.urls import re_path
    from mcp_django.routing import lifespan, mcp_path

    application = ProtocolTypeRouter({
        "http": URLRouter([mcp_path("internal/mcp"), re_path(r"", django_asgi_app)]),
        "websocket": ...,          # the project's own consumers, unchanged
        "lifespan": lifespan,      # uvicorn: runs the MCP runtime from startup to shutdown
    })

Owns the route (a Django ``re_path`` that Channels' ``URLRouter`` matches) and the ``lifespan``
application; the endpoint itself (``mcp_protocol/transports/http.py``) never looks at
``scope["path"]``, so it answers wherever it is mounted, behind any ``root_path``. Each route is
handed the service it serves with (``service.py``: the process's by default). ``find_endpoints``
walks a routing tree for the system check that says when the endpoint is routed nowhere
(``checks.py``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from django.core.checks import CheckMessage
from django.urls import URLPattern

from mcp_protocol.endpoints import valid_slug
from mcp_protocol.transports.endpoints import SLUG_KWARG
from mcp_protocol.transports.host import RuntimeHost
from mcp_protocol.transports.http import MCPEndpoint, PrincipalResolver
from mcp_protocol.transports.legacy_sse import LegacySSEEndpoint
from mcp_protocol.transports.responses import Receive, Scope, Send

from . import servers
from .conf import mcp_settings
from .service import get_service

DEFAULT_ROUTE = "mcp"


class ExactPath:
    """The path pattern of ``mcp_path``: the route itself or the route plus one slash, compared as
    strings. Channels' ``URLRouter`` only calls ``match``; a regex (``re_path``) did the same in
    twice the time (2.4 against 1.4 µs per request through ProtocolTypeRouter + URLRouter)."""

    def __init__(self, route: str, name: str | None = None) -> None:
        self.route, self.with_slash, self.name = route, route + "/", name
        self.converters: dict[str, Any] = {}

    def match(self, path: str) -> tuple[str, tuple[()], dict[str, Any]] | None:
        if path == self.route or path == self.with_slash:
            return "", (), {}
        return None

    def check(self) -> list[CheckMessage]:
        return []

    def describe(self) -> str:
        return f"'{self.route}[/]'"

    def __str__(self) -> str:
        return self.route


class SlugPath:
    """The path pattern of ``mcp_servers_path``: ``<route>/<slug>`` and ``<route>/<slug>/``, where
    ``slug`` is a well-formed virtual server slug (``endpoints.valid_slug``); it hands the slug to
    the endpoint as the ``url_route`` kwarg ``SLUG_KWARG``. Anything deeper
    (``<route>/<slug>/server-card``) does not match, so it reaches the project's next route."""

    def __init__(self, route: str, name: str | None = None) -> None:
        self.route, self.prefix, self.name = route, route + "/", name
        self.converters: dict[str, Any] = {}

    def match(self, path: str) -> tuple[str, tuple[()], dict[str, Any]] | None:
        slug = slug_of(path, self.prefix)
        return None if slug is None else ("", (), {SLUG_KWARG: slug})

    def check(self) -> list[CheckMessage]:
        return []

    def describe(self) -> str:
        return f"'{self.prefix}<slug>[/]'"

    def __str__(self) -> str:
        return self.prefix + "<slug>"


def slug_of(path: str, prefix: str) -> str | None:
    """The slug of ``path`` when it is ``<prefix><slug>`` or ``<prefix><slug>/``, else None."""
    if not path.startswith(prefix):
        return None
    slug = path[len(prefix):]
    if slug.endswith("/"):
        slug = slug[:-1]
    return slug if valid_slug(slug) else None


def mcp_path(
    route: str = DEFAULT_ROUTE,
    endpoint: MCPEndpoint | None = None,
    *,
    resolve_principal: PrincipalResolver | None = None,
    name: str = "mcp",
    service: RuntimeHost | None = None,
    default_server: str | None = None,
) -> URLPattern:
    """A route for ``URLRouter``: the endpoint at ``/<route>`` and ``/<route>/`` (clients are
    configured with either), nothing below it. ``route`` is a plain path (``"internal/mcp"``),
    not a pattern; it is relative to the router it goes into, like any Django route. ``service``:
    the runtime host it serves with (the process's, ``get_service()``, unless given).
    ``default_server``: what the route serves (``MCP["DEFAULT_SERVER"]`` unless given): the
    catch-all (unset), a virtual server's slug, or ``"off"`` (404). ``mcp_servers_path`` adds
    ``/<route>/<slug>`` with the same endpoint."""
    stripped = route.strip("/")
    if not stripped:
        raise ValueError("mcp_path needs a non-empty route, such as 'mcp'")
    if endpoint is None:
        # No resolver given: the endpoint asks MCP['PRINCIPAL_RESOLVER'] (open mode by default).
        default = default_server if default_server is not None else mcp_settings.DEFAULT_SERVER
        endpoint = MCPEndpoint(service or get_service(), resolve_principal, default=default or None)
    elif resolve_principal is not None or service is not None or default_server is not None:
        raise ValueError(
            "pass resolve_principal, service and default to the MCPEndpoint, or no endpoint: not both"
        )
    servers.start_under_daphne(endpoint.host)  # daphne sends no lifespan: start when its reactor runs
    return URLPattern(ExactPath(stripped, name), endpoint, name=name)


def mcp_servers_path(route: URLPattern) -> URLPattern:
    """The virtual servers beside an ``mcp_path`` route: ``/<route>/<slug>`` (and with a slash),
    served by the same endpoint (docs/reference/endpoint.md "Virtual servers"). An unknown or
    disabled slug is the endpoint's 404; paths below a slug go on to the next route."""
    name = f"{route.name or 'mcp'}-server"
    return URLPattern(SlugPath(str(route.pattern), name), route.callback, name=name)


class EndpointFirst:
    """``EndpointFirst(router, route)``: requests for the path of ``route`` (an ``mcp_path``) go
    straight to its endpoint; everything else, and any request under a ``root_path``, goes to
    ``inner``, which must route that endpoint too (so the system check finds it either way).

    Why: Channels' ``URLRouter`` copies the scope for each request it routes, adding
    ``path_remaining`` and ``url_route``, which the endpoint never reads. That costs ~3 µs per
    tools/call (``bench/bench_routing.py``). A GET stream's frames hold the copy for the stream's
    whole life, so it also costs ~1.2 KB per idle stream (``bench/tracemalloc_streams.py``)."""

    def __init__(self, inner: Any, route: URLPattern, *, servers: bool = False) -> None:
        self.inner = inner
        self.endpoint = route.callback
        name = str(route.pattern)
        self.paths = frozenset({f"/{name}", f"/{name}/"})
        # ``servers``: ``inner`` also routes ``mcp_servers_path(route)``; its paths go straight
        # to the endpoint too, with the slug where the router would have put it.
        self.prefix = f"/{name}/" if servers else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not scope.get("root_path"):
            path = scope["path"]
            if path in self.paths:
                await self.endpoint(scope, receive, send)
                return
            if self.prefix is not None:
                slug = slug_of(path, self.prefix)
                if slug is not None:
                    scope["url_route"] = {"args": (), "kwargs": {SLUG_KWARG: slug}}
                    await self.endpoint(scope, receive, send)
                    return
        await self.inner(scope, receive, send)


def legacy_sse_paths(
    prefix: str = "", service: RuntimeHost | None = None, *, default_server: str | None = None
) -> list[URLPattern]:
    """The deprecated HTTP+SSE transport of 2024-11-05 for old clients (``transports/
    legacy_sse.py``): ``GET <prefix>sse`` and ``POST <prefix>messages?session_id=…``, siblings, as
    the ``endpoint`` event names the POST URL relative to the SSE one; and for each virtual server
    ``GET <prefix>sse/<slug>`` with ``POST <prefix>messages/<slug>?session_id=…``.
    ``default_server``: what ``sse`` serves, as ``mcp_path``'s."""
    default = default_server if default_server is not None else mcp_settings.DEFAULT_SERVER
    endpoint = LegacySSEEndpoint(service or get_service(), default=default or None)
    servers.start_under_daphne(endpoint.host)
    base = prefix.strip("/") + "/" if prefix.strip("/") else ""
    routes = []
    for path, name in ((f"{base}sse", "mcp-legacy-sse"), (f"{base}messages", "mcp-legacy-messages")):
        routes.append(URLPattern(ExactPath(path, name), endpoint, name=name))
        routes.append(URLPattern(SlugPath(path, f"{name}-server"), endpoint, name=f"{name}-server"))
    return routes


async def lifespan(scope: Scope, receive: Receive, send: Send) -> None:
    """The ASGI ``lifespan`` protocol for the process's service (uvicorn sends it; daphne does
    not: the runtime starts and closes from reactor triggers there). The runtime runs from startup
    to shutdown (``servers.lifespan``: ``RuntimeHost.run``), so the worker fans out changes
    before its first request.
    A project that hands its endpoint another service routes that service's ``lifespan``."""
    await servers.lifespan(get_service(), scope, receive, send)


def in_urlconf() -> bool:
    """Whether ROOT_URLCONF routes to an ``MCPEndpoint`` (a mistake: Django would call it as a
    view). Walks ``include()``s; an URLconf that does not import is Django's own check to report."""
    from django.urls import get_resolver

    def walk(patterns: Any) -> bool:
        for pattern in patterns:
            if isinstance(getattr(pattern, "callback", None), MCPEndpoint):
                return True
            if hasattr(pattern, "url_patterns") and walk(pattern.url_patterns):
                return True
        return False

    try:
        return walk(get_resolver().url_patterns)
    except Exception:  # an URLconf that does not import is reported by Django's urls check
        return False


def find_endpoints(app: Any) -> Iterator[MCPEndpoint]:
    """Every ``MCPEndpoint`` reachable from an ASGI app through Channels' routers (and the
    ``application_mapping`` / ``routes`` / ``app`` / ``inner`` attributes that routers and
    middleware keep), each once (``/mcp`` and ``/mcp/<slug>`` share one), so the check can say the
    endpoint is routed nowhere."""
    seen: set[int] = set()
    for endpoint in _walk(app, 0):
        if id(endpoint) not in seen:
            seen.add(id(endpoint))
            yield endpoint


def _walk(app: Any, depth: int) -> Iterator[MCPEndpoint]:
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
            yield from _walk(child, depth + 1)
