"""Each virtual server (``/mcp/<slug>``, ``endpoints.py``) is its own ``Server`` to a client.

``endpoint_server(base, spec)`` makes the core ``Server`` that answers as ``spec``: its own
``serverInfo`` (name, title, version, description, icons, website from the spec, shaped per
revision by ``versions.implementation_to_wire``) and ``instructions``; its own wire cache; cursors
and MRTR ``requestState`` sealed with keys derived from the base's for its slug, so a cursor or a
state issued on one endpoint is refused on another (it is "Invalid cursor", as a forged one:
2025-11-25 server/utilities/pagination.mdx "Invalid cursors SHOULD result in an error with code
-32602"). It shares with the base what is the deployment's, not the endpoint's: the provider, the
in-flight table (a DELETE or a stopping worker reaches every request), the change feed, the task
runner, the interceptor (limits, audit) and tracing. Its handlers see the spec's selection
(``methods/base.py`` ``Call.full_snapshot``).

``EndpointServers`` keeps one per spec, built on first use: a snapshot with a changed spec for a
slug gives a new one; a bound keeps a deployment that churns through slugs from growing it.
"""

from __future__ import annotations

import copy
import hashlib
import hmac

from .endpoints import EndpointSpec
from .methods.wire_cache import WireCache
from .pagination import Paginator
from .request_state import RequestStateSealer
from .server import Server

# Domain separation of the derived keys: a slug's cursor key is never its request-state key.
_CURSOR = b"mcp-endpoint-cursor:"
_STATE = b"mcp-endpoint-request-state:"


def derive(key: bytes, domain: bytes, slug: str) -> bytes:
    return hmac.new(key, domain + slug.encode(), hashlib.sha256).digest()


def endpoint_server(base: Server, spec: EndpointSpec) -> Server:
    """A ``Server`` answering as ``spec``, sharing ``base``'s deployment-wide parts."""
    # Shares every attribute of the base; what is the endpoint's is replaced below. A per-server
    # attribute added to ``Server`` later must be replaced here too, or the endpoints share it.
    server = copy.copy(base)
    server.__dict__.pop("_modern_server_info", None)  # a cached_property of the base's identity
    server.name, server.version, server.title = spec.name, spec.version, spec.title
    server.instructions, server.description = spec.instructions, spec.description
    server.icons, server.website_url = spec.icons, spec.website_url
    paginator = base.paginator
    server.paginator = Paginator(
        derive(base.cursor_secret, _CURSOR, spec.slug), paginator.page_size, paginator.max_age
    )
    keys = [derive(key, _STATE, spec.slug) for key in base.request_state_keys]
    server.request_state = RequestStateSealer(keys, base.request_state.ttl)
    server.wire_cache = WireCache()
    server.endpoint, server.endpoint_key = spec, spec.slug
    server.tool_search = spec.tool_search
    return server


class EndpointServers:
    """One ``Server`` per ``EndpointSpec`` of ``base``, made on first use, at most ``limit``."""

    def __init__(self, base: Server, limit: int = 1024) -> None:
        self.base, self.limit = base, limit
        self._by_slug: dict[str, Server] = {}

    def get(self, spec: EndpointSpec) -> Server:
        server = self._by_slug.get(spec.slug)
        # ``is`` first: a snapshot rebuilt for an unrelated edit keeps equal specs, compared once.
        if server is not None:
            if server.endpoint is spec:
                return server
            if server.endpoint == spec:
                server.endpoint = spec  # the same server: next time ``is`` answers
                return server
        if server is None and len(self._by_slug) >= self.limit:
            # The oldest made goes: a churn of slugs costs rebuilding, never unbounded memory.
            del self._by_slug[next(iter(self._by_slug))]
        server = self._by_slug[spec.slug] = endpoint_server(self.base, spec)
        return server

    def __len__(self) -> int:
        return len(self._by_slug)
