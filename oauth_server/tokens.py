"""Access tokens: JWTs (RFC 9068) signed with the current key (``keys.sign``), so ``/mcp`` checks
them with the resource server's own verifier (``mcp_protocol.auth.oauth``), against the JWKS held
in memory: no database query per request.

Claims: ``iss`` (this issuer), ``sub`` (the Django user's primary key), ``aud`` (the RFC 8707
resource the grant was for: ``audience``), ``client_id``, ``scope``, ``iat``, ``exp`` (oauthlib's
``expires_in``), ``jti``; a token exchange's (``exchange.py``) also ``act`` (RFC 8693 §4.1), its
``aud`` an upstream's resource. The token is also stored by django-oauth-toolkit, as a digest only
(RFC 9700 token storage), so revocation and the users' and staff's lists work as for any token.
"""

from __future__ import annotations

import secrets
import time
from typing import Any

from oauthlib.oauth2.rfc6749 import errors

from mcp_django import virtual_servers
from mcp_django.conf import access_settings
from mcp_protocol.endpoints import EndpointSpec, valid_slug

from .keys import sign


def allowed_resources() -> list[str]:
    """The resources tokens may be for: this server's ``/mcp`` (RFC 8707 audience). A virtual
    server's ``/mcp/<slug>`` is one too, while it is enabled (``endpoint_of``): named apart, so an
    error never lists the servers a deployment has."""
    return [str(access_settings()["RESOURCE_URL"])]


def endpoint_of(resource: str) -> EndpointSpec | None:
    """The enabled virtual server whose resource URL ``resource`` is (issue 39: a token's audience
    is the endpoint it is for, so a token for ``/mcp/a`` is refused on ``/mcp/b``), or None."""
    base = str(access_settings()["RESOURCE_URL"]).rstrip("/") + "/"
    resource = resource.rstrip("/")
    if not resource.startswith(base) or "/" in resource[len(base):]:
        return None
    slug = resource[len(base):]
    return virtual_servers.enabled(slug) if valid_slug(slug) else None


def ours(resource: str) -> bool:
    allowed = {a.rstrip("/") for a in allowed_resources()}
    return resource.rstrip("/") in allowed or endpoint_of(resource) is not None


def audience(requested: list[str], request: Any = None) -> list[str]:
    """``requested`` (the grant's or the request's ``resource``s), every one a resource of ours,
    or ``invalid_target`` (RFC 8707 §2); none: this server's ``/mcp`` (clients that predate RFC
    8707 get a token for the catch-all server; a virtual server refuses it: its clients send
    ``resource``, as MCP authorization requires, "Resource Parameter Implementation")."""
    allowed = allowed_resources()
    for resource in requested:
        if not ours(resource):
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
    act = getattr(request, "mcp_act", None)
    if act:
        claims["act"] = act
    return sign(claims)
