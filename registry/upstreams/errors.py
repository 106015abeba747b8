"""What connecting to an upstream can end in, each with a sentence an operator can act on."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..kinds.http_client.challenge import Forbidden


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


class UpstreamForbidden(UpstreamUnauthorized):
    """The upstream said 403 to the handshake: the credentials are valid but not allowed (RFC 6750
    §3.1), so a new token of the same grant is not fetched; ``refusal`` says why."""

    def __init__(self, message: str, refusal: Forbidden) -> None:
        super().__init__(message)
        self.refusal = refusal


class NoListenStream(Exception):
    """The upstream offers no listen stream: the periodic sync keeps it current."""
