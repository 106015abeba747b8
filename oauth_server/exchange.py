"""RFC 8693 token exchange at the token endpoint (issue 42 item 4): a confidential client named in
``MCP_OAUTH_EXCHANGE_CLIENTS`` hands in a user's access token of this server (the subject token)
and gets one for an upstream resource an operator registered (``ExchangeTarget``), so the upstream
sees the user, not a shared account.

The request (§2.1): ``grant_type=urn:ietf:params:oauth:grant-type:token-exchange``,
``subject_token`` and ``subject_token_type=urn:ietf:params:oauth:token-type:access_token``,
``resource`` and/or ``audience`` naming one target, optional ``scope`` and
``requested_token_type`` (an access token is all we issue); no ``actor_token`` (the actor is the
authenticated client). The answer (§2.2.1): a JWT access token (RFC 9068, ``tokens.py``) with
``aud`` the target's resource, ``sub`` the subject's user, ``scope`` = requested ∩ the subject
token's ∩ the target's, ``act`` = ``{"sub": <client id>}`` (§4.1), a lifetime no longer than the
subject token's remaining one, no refresh token, and ``issued_token_type``.

The subject token must be one this server issued for one of its own MCP endpoints (so a token
issued by an exchange, for an upstream, can never be exchanged again to reach further), still
valid: signature under a published key, ``typ`` at+jwt, issuer, expiry, still held by the toolkit
(revoked tokens are deleted), no revocation watermark (``revocations.py``), its user active.

Errors (§2.2.2, RFC 6749 §5.2): ``invalid_client`` (401), ``unauthorized_client``,
``invalid_request``, ``invalid_grant`` (a bad subject token: the reason never echoes the token),
``invalid_target`` (not a registered, enabled target), ``invalid_scope``. Every issue and refusal
is an audit row naming the client and, once known, the user: never a token.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import jwt
from django.contrib.auth import get_user_model
from oauth2_provider.models import AbstractApplication, get_access_token_model
from oauthlib.oauth2.rfc6749 import errors
from oauthlib.oauth2.rfc6749.grant_types.base import GrantTypeBase

from mcp_django.conf import access_settings

from .conf import TOKEN_EXCHANGE, exchange_clients, server_settings
from .keys import verification_key
from .models import ExchangeTarget, Revocation, record
from .tokens import ours

ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token"  # RFC 8693 §3
SINGLE = ("grant_type", "subject_token", "subject_token_type", "requested_token_type", "scope")


@dataclass(frozen=True)
class Subject:
    user: Any
    client_id: str
    scopes: frozenset[str]
    expires_at: float


def _invalid_target(request: Any, description: str) -> errors.OAuth2Error:
    return errors.CustomOAuth2Error(error="invalid_target", status_code=400, request=request,
                                    description=description)


def _param(request: Any, name: str) -> str:
    """A form parameter oauthlib does not name (its ``Request`` raises AttributeError for those
    absent from the body)."""
    value = getattr(request, name, None)
    return value if isinstance(value, str) else ""


def _values(request: Any, name: str) -> list[str]:
    return [v for k, v in (getattr(request, "decoded_body", None) or []) if k == name and v.strip()]


def target_of(request: Any) -> ExchangeTarget:
    """The one enabled target the request's ``resource``/``audience`` values all name."""
    names = {v.strip().rstrip("/") for v in _values(request, "resource") + _values(request, "audience")}
    if not names:
        raise errors.InvalidRequestError(request=request, description="name the upstream with "
                                         "resource or audience (RFC 8693 §2.1)")
    found = set()
    targets = list(ExchangeTarget.objects.filter(enabled=True))
    for name in names:
        match = [t for t in targets if name in (t.resource.rstrip("/"), t.name)]
        if not match:
            raise _invalid_target(request, "this server exchanges tokens only for the upstream "
                                  "resources its operator registered")
        found.add(match[0].pk)
    if len(found) > 1:
        raise _invalid_target(request, "one target per exchange")
    target = next(t for t in targets if t.pk in found)
    if ours(target.resource):  # registered before clean() refused it: still never our own /mcp
        raise _invalid_target(request, "this server's own MCP endpoints are not an exchange target")
    return target


def subject_of(token: str, request: Any) -> Subject:
    """The user and grant of ``token``, an access token this server issued for its own MCP
    endpoints and that still holds; ``invalid_grant`` otherwise."""

    def refuse(why: str) -> errors.OAuth2Error:
        return errors.InvalidGrantError(request=request, description=f"subject token refused: {why}")

    try:
        header = jwt.get_unverified_header(token)
    except jwt.PyJWTError:
        raise refuse("not a JWT") from None
    if header.get("typ") != "at+jwt" or not isinstance(header.get("kid"), str):
        raise refuse("not an access token of this server")
    key = verification_key(header["kid"])
    if key is None:
        raise refuse("not signed by this server")
    algorithm, public = key
    try:
        claims = jwt.decode(token, public, algorithms=[algorithm], issuer=access_settings()["OAUTH_ISSUER"],
                            options={"verify_aud": False,
                                     "require": ["exp", "iat", "iss", "sub", "aud", "client_id"]})
    except jwt.ExpiredSignatureError:
        raise refuse("expired") from None
    except jwt.PyJWTError:
        raise refuse("its signature or claims do not verify") from None
    audiences = claims["aud"] if isinstance(claims["aud"], list) else [claims["aud"]]
    if not audiences or not all(isinstance(a, str) and ours(a) for a in audiences):
        raise refuse("not a token for this server's MCP endpoints (an exchanged token is not "
                     "exchanged again)")
    digest = hashlib.sha256(token.encode("utf-8")).hexdigest()
    held = get_access_token_model().objects.filter(token_checksum=digest).first()
    if held is None or held.is_expired() or str(held.user_id) != str(claims["sub"]):
        raise refuse("revoked")
    if Revocation.objects.filter(subject=str(claims["sub"]), client_id=str(claims["client_id"]),
                                 before__gte=float(claims["iat"])).exists():
        raise refuse("revoked")
    user = get_user_model().objects.filter(pk=held.user_id).first()
    if user is None or not user.is_active:
        raise refuse("its user cannot sign in")
    scope = claims.get("scope")
    return Subject(user, str(claims["client_id"]),
                   frozenset(scope.split() if isinstance(scope, str) else ()), float(claims["exp"]))


def repeated(form: Mapping[str, list[str]]) -> tuple[str, str] | None:
    """(error, description) for an exchange whose form repeats a parameter, seen before the
    toolkit flattens the form (it keeps the last value of all but ``resource``): RFC 6749 §3.2
    allows no repeated parameter (``invalid_request``), and RFC 8693 §2.1 allows several
    ``audience`` values, of which we issue for one target only (``invalid_target``)."""
    for name in (*SINGLE, "actor_token", "actor_token_type"):
        if len(form.get(name, [])) > 1:
            return "invalid_request", f"duplicate {name}"
    if len(form.get("audience", [])) > 1:
        return "invalid_target", "one target per exchange"
    return None


class TokenExchangeGrant(GrantTypeBase):  # type: ignore[misc]
    """The oauthlib grant (``server.py`` registers it) for ``TOKEN_EXCHANGE``."""

    def create_token_response(self, request: Any, token_handler: Any) -> tuple[dict[str, str], str, int]:
        headers: dict[str, str] = self._get_default_headers()
        try:
            self.validate_token_request(request)
        except errors.OAuth2Error as exc:
            headers.update(exc.headers)
            client = getattr(request, "mcp_exchanger", "")
            if client:  # refusals of an authenticated client are audited; strangers are rate limited
                record("exchange_refused", user=getattr(request, "mcp_subject_user", None), client_id=client,
                       detail=f"{exc.error}: {exc.description}")
            return headers, exc.json, exc.status_code
        token = token_handler.create_token(request, refresh_token=False)
        token["issued_token_type"] = ACCESS_TOKEN_TYPE  # RFC 8693 §2.2.1
        self.request_validator.save_token(token, request)
        return headers, json.dumps(token), 200

    def validate_token_request(self, request: Any) -> None:
        if request.grant_type != TOKEN_EXCHANGE or not exchange_clients():
            raise errors.UnsupportedGrantTypeError(request=request)
        for param in SINGLE:
            if param in request.duplicate_params:
                raise errors.InvalidRequestError(request=request, description=f"duplicate {param}")
        if not self.request_validator.authenticate_client(request):
            raise errors.InvalidClientError(request=request)
        client = request.client
        request.mcp_exchanger = client.client_id
        # Least privilege: only confidential clients the operator named exchange (RFC 8693 §5: the
        # server decides which clients may act for which subjects).
        if (client.client_type != AbstractApplication.CLIENT_CONFIDENTIAL
                or client.client_id not in exchange_clients()):
            raise errors.UnauthorizedClientError(request=request, description="this client may not "
                                                 "exchange tokens (MCP_OAUTH_EXCHANGE_CLIENTS)")
        subject_token = _param(request, "subject_token")
        if not subject_token:
            raise errors.InvalidRequestError(request=request, description="subject_token is required")
        if _param(request, "subject_token_type") != ACCESS_TOKEN_TYPE:
            raise errors.InvalidRequestError(request=request, description=f"subject_token_type must be "
                                             f"{ACCESS_TOKEN_TYPE}")
        if _param(request, "requested_token_type") not in ("", ACCESS_TOKEN_TYPE):
            raise errors.InvalidRequestError(request=request, description=f"this server issues "
                                             f"{ACCESS_TOKEN_TYPE} only")
        if _param(request, "actor_token") or _param(request, "actor_token_type"):
            raise errors.InvalidRequestError(request=request, description="actor_token is not "
                                             "supported: the authenticated client is the actor")
        target = target_of(request)
        subject = subject_of(subject_token, request)
        request.mcp_subject_user = subject.user
        allowed = subject.scopes & target.allowed_scopes()
        requested = set(request.scopes or ())
        if requested and not requested <= allowed:
            raise errors.InvalidScopeError(request=request, description="the scope asked for is more "
                                           "than the subject token holds and the target allows")
        remaining = int(subject.expires_at - time.time())
        if remaining <= 0:
            raise errors.InvalidGrantError(request=request, description="subject token refused: expired")
        request.user = subject.user
        request.scopes = sorted(requested or allowed)
        request.resource = [target.resource]  # the toolkit's row (RFC 8707), as for our own tokens
        request.mcp_audience = [target.resource]
        request.mcp_expires_in = min(remaining, int(server_settings()["ACCESS_TOKEN_SECONDS"]))
        request.mcp_act = {"sub": client.client_id}  # RFC 8693 §4.1: who acts for the subject
        request.mcp_target = target.name
