"""The oauthlib server django-oauth-toolkit runs: authorization code and refresh token grants, and
RFC 8693 token exchange for the clients an operator names (``exchange.py``); no implicit,
password, client credentials or device grant; PKCE with S256 only.

OAuth 2.1 §4.1.1 and the MCP authorization spec: clients MUST use PKCE with S256 where they can;
``plain`` is refused at the authorization endpoint, before sign-in, with ``invalid_request``
(oauthlib: "Transform algorithm not supported"), and a missing challenge too (``PKCE_REQUIRED``).
"""

from __future__ import annotations

from typing import Any

from oauthlib.oauth2 import WebApplicationServer
from oauthlib.oauth2.rfc6749.grant_types.authorization_code import code_challenge_method_s256

from mcp_django.compat.oauthlib import add_grant_type, set_code_challenge_methods

from .conf import TOKEN_EXCHANGE
from .exchange import TokenExchangeGrant


def _lifetime(default: Any) -> Any:
    """``expires_in`` per request: an exchange's token lives no longer than its subject token
    (``request.mcp_expires_in``); every other token, the configured lifetime."""

    def expires_in(request: Any) -> int:
        chosen = getattr(request, "mcp_expires_in", None)
        if chosen is not None:
            return int(chosen)
        return int(default(request) if callable(default) else default)

    return expires_in


class AuthorizationCodeServer(WebApplicationServer):
    def __init__(
        self,
        request_validator: Any,
        token_expires_in: Any = None,
        token_generator: Any = None,
        refresh_token_generator: Any = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            request_validator,
            token_generator=token_generator,
            token_expires_in=_lifetime(token_expires_in or 3600),
            refresh_token_generator=refresh_token_generator,
        )
        set_code_challenge_methods(self.auth_grant, {"S256": code_challenge_method_s256})
        add_grant_type(self, TOKEN_EXCHANGE, TokenExchangeGrant(request_validator))
