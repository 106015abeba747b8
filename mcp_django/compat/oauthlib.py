"""oauthlib internals the authorization server relies on (4.0).

``AuthorizationCodeGrant._code_challenge_methods`` maps each PKCE ``code_challenge_method`` the
grant accepts to its check; oauthlib has no public way to narrow it, and OAuth 2.1 §4.1.1 (and
the MCP authorization spec) want S256 only (``oauth_server/server.py``).

``TokenEndpoint._grant_types`` maps each ``grant_type`` to its handler; oauthlib's pre-configured
servers take no extra grant, and RFC 8693 token exchange is one (``oauth_server/exchange.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def set_code_challenge_methods(grant: Any, methods: dict[str, Callable[..., bool]]) -> None:
    """Accept only ``methods`` (name → verifier) as a PKCE ``code_challenge_method`` on ``grant``."""
    grant._code_challenge_methods = dict(methods)


def add_grant_type(endpoint: Any, grant_type: str, handler: Any) -> None:
    """Route token requests of ``grant_type`` on ``endpoint`` (an oauthlib ``TokenEndpoint``, e.g.
    a ``WebApplicationServer``) to ``handler`` (a ``GrantTypeBase``)."""
    endpoint._grant_types[grant_type] = handler
