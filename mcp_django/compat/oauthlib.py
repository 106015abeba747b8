"""oauthlib internals the authorization server relies on (4.0).

``AuthorizationCodeGrant._code_challenge_methods`` maps each PKCE ``code_challenge_method`` the
grant accepts to its check; oauthlib has no public way to narrow it, and OAuth 2.1 §4.1.1 (and
the MCP authorization spec) want S256 only (``oauth_server/server.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def set_code_challenge_methods(grant: Any, methods: dict[str, Callable[..., bool]]) -> None:
    """Accept only ``methods`` (name → verifier) as a PKCE ``code_challenge_method`` on ``grant``."""
    grant._code_challenge_methods = dict(methods)
