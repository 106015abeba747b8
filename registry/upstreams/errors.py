"""What connecting to an upstream can end in, each with a sentence an operator can act on."""

from __future__ import annotations


class UpstreamError(Exception):
    """Reaching the upstream failed; ``str(exc)`` says why."""


class UpstreamRefused(UpstreamError):
    """Our rules said no (host not allowed, private address, secret variable not allowed or not
    set): nothing was sent."""


class UpstreamUnavailable(UpstreamError):
    """The network or the upstream failed: refused connection, timeout, an HTTP error, an answer
    that is not MCP, a failed handshake."""


class UpstreamUnauthorized(UpstreamUnavailable):
    """The upstream (or its token endpoint) said 401/403."""
