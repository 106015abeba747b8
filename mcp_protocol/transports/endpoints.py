"""Which server a request on ``/mcp`` or ``/mcp/<slug>`` is for, and the runtime it is served with.

The router (``mcp_django/routing.py``) names the slug it read from the path in the scope's
``url_route`` kwargs (``SLUG_KWARG``), as Channels' ``URLRouter`` does for any captured part;
``/mcp`` itself names none and is served as the endpoint's ``default`` says: the catch-all
(``None``: the whole snapshot, as before virtual servers), a slug (``/mcp`` *is* that virtual
server: its sessions carry its slug), or ``OFF`` (404).

The slug is looked up in the provider's current snapshot (``Snapshot.endpoint``: enabled servers
only; no database on the request path). Unknown or disabled: 404 with a JSON-RPC error body, for
every method, before the caller is resolved (the path names no server: there is nothing to
authenticate against, and the answer is the same for everyone, so it tells nothing of who may use
which server). Found: ``scope[endpoints.SCOPE_KEY]`` is its spec (the auth seam reads it) and the
request is served by an ``EndpointRuntime`` (``runtime.py``): the worker's ``Runtime`` whose
``server`` is the virtual server's own core ``Server`` (``endpoint_servers.py``), built once per
spec. A request on
the catch-all is served by the ``Runtime`` itself: it pays one dict lookup and one store, nothing
else.
"""

from __future__ import annotations

from dataclasses import replace

from ..endpoints import OFF, SCOPE_KEY
from .responses import HTTPError, Scope
from .runtime import Runtime

SLUG_KWARG = "mcp_slug"  # the url_route kwarg naming the virtual server of the path
NOT_FOUND = "Not Found: no MCP server at this path"


def route(rt: Runtime, scope: Scope, default: str | None) -> Runtime:
    """The runtime serving this request, with ``scope[SCOPE_KEY]`` set; ``HTTPError`` 404 for a
    path that names no enabled server (or ``/mcp`` turned off)."""
    named = scope.get("url_route")
    slug: str | None = named["kwargs"].get(SLUG_KWARG) if named is not None else None
    at_root = slug is None
    if slug is None:
        if default is None:  # the catch-all: the hot path of a deployment without virtual servers
            scope[SCOPE_KEY] = None
            return rt
        slug = default
    spec = None if slug == OFF else rt.provider.snapshot().endpoint(slug)
    if spec is None:
        raise HTTPError(404, NOT_FOUND)
    # At /mcp itself its clients' tokens are for /mcp (RFC 8707): the auth seam reads at_root.
    scope[SCOPE_KEY] = replace(spec, at_root=True) if at_root else spec
    return rt.endpoint_runtimes.get(spec)
