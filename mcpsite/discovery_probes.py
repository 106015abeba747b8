"""OAuth discovery probes answered 404 without a WARNING line each.

A client that meets a 401 on ``/mcp`` looks for a way to sign in (MCP basic/authorization.mdx;
the TypeScript SDK 1.x and ``mcp-remote`` do this against any server): RFC 9728 protected
resource metadata (path-inserted, then at the root), RFC 8414 authorization server metadata and
OpenID discovery (path-inserted, path-appended, root), then the 2025-03-26 default endpoints at
the origin (``/register``, ``/authorize``, ``/token``). A server with ``MCP_AUTH=keys`` has none
of these: the 404 is the answer the spec asks for (RFC 9728 §3.2, RFC 8414 §3.2), and the client
then reports that the server wants a key. Django logs every 404 as a WARNING
(``django.request``), so each connection attempt of such a client wrote five to eight of them;
``QuietDiscoveryProbes`` drops exactly those records: a 404 of one of these paths. Any other
404, and any other status of these paths, is logged as before.
"""

from __future__ import annotations

import logging
import re

PROBE = re.compile(
    r"^(?:/[^?]*)?/\.well-known/(?:oauth-protected-resource|oauth-authorization-server|openid-configuration)"
    r"(?:/[^?]*)?$"
    r"|^/(?:register|authorize|token)/?$"
)


def is_probe(path: str) -> bool:
    return PROBE.match(path) is not None


class QuietDiscoveryProbes(logging.Filter):
    """For the ``django.request`` logger: its records carry ``status_code`` and ``request``."""

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "status_code", None) != 404:
            return True
        return not is_probe(str(getattr(getattr(record, "request", None), "path", "")))
