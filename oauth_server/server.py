"""The oauthlib server django-oauth-toolkit runs: authorization code and refresh token grants only
(no implicit, password, client credentials or device grant), PKCE with S256 only.

OAuth 2.1 §4.1.1 and the MCP authorization spec: clients MUST use PKCE with S256 where they can;
``plain`` is refused at the authorization endpoint, before sign-in, with ``invalid_request``
(oauthlib: "Transform algorithm not supported"), and a missing challenge too (``PKCE_REQUIRED``).
"""

from __future__ import annotations

from typing import Any

from oauthlib.oauth2 import WebApplicationServer
from oauthlib.oauth2.rfc6749.grant_types.authorization_code import code_challenge_method_s256

from mcp_django.compat.oauthlib import set_code_challenge_methods


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
            token_expires_in=token_expires_in,
            refresh_token_generator=refresh_token_generator,
        )
        set_code_challenge_methods(self.auth_grant, {"S256": code_challenge_method_s256})
