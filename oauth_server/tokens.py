"""Access tokens: JWTs (RFC 9068) signed with the current key (``keys.sign``), so ``/mcp`` checks
them with the resource server's own verifier (``mcp_protocol.auth.oauth``), against the JWKS held
in memory: no database query per request.

Claims: ``iss`` (this issuer), ``sub`` (the Django user's primary key), ``aud`` (the RFC 8707
resource the grant was for: ``audience``), ``client_id``, ``scope``, ``iat``, ``exp`` (oauthlib's
``expires_in``), ``jti``. The token is also stored by django-oauth-toolkit, as a digest only
(RFC 9700 token storage), so revocation and the users' and staff's lists work as for any token.
"""

from __future__ import annotations

import secrets
import time
from typing import Any

from oauthlib.oauth2.rfc6749 import errors

from mcp_django.conf import access_settings

from .keys import sign


def allowed_resources() -> list[str]:
    """The resources tokens may be for: this server's ``/mcp`` (RFC 8707 audience)."""
    return [str(access_settings()["RESOURCE_URL"])]


def audience(requested: list[str], request: Any = None) -> list[str]:
    """``requested`` (the grant's or the request's ``resource``s), every one a resource of ours,
    or ``invalid_target`` (RFC 8707 §2); none: this server's ``/mcp`` (clients that predate RFC
    8707 get a token for the only resource we serve)."""
    allowed = allowed_resources()
    for resource in requested:
        if resource.rstrip("/") not in {a.rstrip("/") for a in allowed}:
            raise errors.CustomOAuth2Error(
                error="invalid_target",
                status_code=400,
                request=request,
                description=f"this server issues tokens for {', '.join(allowed)} only",
            )
    return list(requested) or allowed


def access_token(request: Any) -> str:
    """django-oauth-toolkit's ``ACCESS_TOKEN_GENERATOR``: called by oauthlib with ``expires_in``
    set and the grant's checks passed (the validator put the audience on ``request.mcp_audience``)."""
    now = int(time.time())
    resources = getattr(request, "mcp_audience", None) or allowed_resources()
    user = request.user
    claims = {
        "iss": access_settings()["OAUTH_ISSUER"],
        "sub": str(user.pk),
        "aud": resources[0] if len(resources) == 1 else resources,
        "client_id": request.client.client_id,
        "scope": " ".join(request.scopes or ()),
        "iat": now,
        "exp": now + int(request.expires_in),
        "jti": secrets.token_urlsafe(16),
    }
    return sign(claims)
