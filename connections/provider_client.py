"""The requests the server makes to a provider as its OAuth client: the code exchange (RFC 6749
§4.1.3, with the PKCE ``code_verifier`` of RFC 7636 §4.5), the refresh (RFC 6749 §6), the
revocation (RFC 7009 §2.1) and the token exchange (RFC 8693 §2.1), each a form POST through the
outbound rules (``outbound.py``).

The client authenticates with ``client_secret_post`` when the provider names a secret variable
(read here, when used, under the http kind's environment rule), else as a public client.
``ProviderError``: the provider refused, or could not be reached; its message never carries a
token or the secret.
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass
from typing import Any

from registry.kinds.http_client import secret_env

from . import outbound
from .models import Provider

logger = logging.getLogger(__name__)


class ProviderError(Exception):
    """``refused``: the provider answered no (a 4xx, e.g. ``invalid_grant``): the grant is dead.
    Otherwise it could not be asked (network, 5xx, a malformed answer): the grant may still live."""

    def __init__(self, message: str, *, refused: bool = False) -> None:
        super().__init__(message)
        self.refused = refused


@dataclass(frozen=True)
class Tokens:
    access_token: str
    refresh_token: str = ""
    expires_at: float | None = None  # epoch seconds
    scope: str = ""

    def __repr__(self) -> str:  # never a token in a log line or a traceback's locals
        refreshable = bool(self.refresh_token)
        return f"Tokens(expires_at={self.expires_at!r}, scope={self.scope!r}, refreshable={refreshable})"


def _client_auth(provider: Provider) -> dict[str, str]:
    form = {"client_id": provider.client_id}
    variable = provider.client_secret_env
    if variable:
        if not secret_env.allowed(variable):
            raise ProviderError(f"provider {provider.slug!r} names {variable!r} as its secret, which "
                                f"cannot be used ({secret_env.rule()})")
        secret = os.environ.get(variable)
        if not secret:
            raise ProviderError(f"provider {provider.slug!r}: environment variable {variable!r} is not set")
        form["client_secret"] = secret
    return form


def _post(provider: Provider, url: str, form: dict[str, str]) -> tuple[int, dict[str, Any]]:
    try:
        return outbound.post_form(url, {**form, **_client_auth(provider)})
    except outbound.Refused as exc:
        raise ProviderError(f"provider {provider.slug!r}: {exc}") from None
    except outbound.Failed as exc:
        raise ProviderError(f"provider {provider.slug!r} could not be reached ({exc})") from None


def _tokens(provider: Provider, status: int, answer: dict[str, Any], previous_refresh: str = "") -> Tokens:
    if status != 200 or not isinstance(answer.get("access_token"), str):
        error = answer.get("error") if isinstance(answer.get("error"), str) else f"HTTP {status}"
        raise ProviderError(f"provider {provider.slug!r} refused: {error}", refused=400 <= status < 500)
    lifetime = answer.get("expires_in")
    expires = time.time() + float(lifetime) if isinstance(lifetime, int | float) and lifetime > 0 else None
    refresh = answer.get("refresh_token")
    scope = answer.get("scope")
    return Tokens(answer["access_token"], refresh if isinstance(refresh, str) else previous_refresh,
                  expires, scope if isinstance(scope, str) else provider.scopes)


def exchange_code(provider: Provider, code: str, verifier: str, redirect_uri: str) -> Tokens:
    status, answer = _post(provider, provider.token_url, {
        "grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri,
        "code_verifier": verifier,
    })
    return _tokens(provider, status, answer)


def refresh(provider: Provider, refresh_token: str) -> Tokens:
    """RFC 6749 §6; a provider that rotates refresh tokens sends a new one, else the old one stays."""
    status, answer = _post(provider, provider.token_url, {
        "grant_type": "refresh_token", "refresh_token": refresh_token,
    })
    return _tokens(provider, status, answer, previous_refresh=refresh_token)


def revoke(provider: Provider, token: str, hint: str) -> None:
    """RFC 7009 §2.1, best effort: the token is removed here whatever the provider says."""
    if not provider.revocation_url:
        return
    try:
        status, _ = _post(provider, provider.revocation_url, {"token": token, "token_type_hint": hint})
    except ProviderError as exc:
        logger.warning("revocation at %s failed: %s", provider.slug, exc)
        return
    if status != 200:
        logger.warning("revocation at %s answered HTTP %d", provider.slug, status)


TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token"


def exchange(provider: Provider, subject_token: str) -> Tokens:
    """RFC 8693 §2.1: ``subject_token`` (the caller's access token) for one whose audience is the
    provider's ``resource``, asked as the provider's confidential client."""
    form = {"grant_type": TOKEN_EXCHANGE, "subject_token": subject_token,
            "subject_token_type": ACCESS_TOKEN_TYPE, "requested_token_type": ACCESS_TOKEN_TYPE,
            "resource": provider.resource}
    if provider.scopes:
        form["scope"] = provider.scopes
    status, answer = _post(provider, provider.token_url, form)
    tokens = _tokens(provider, status, answer)
    # No refresh token is kept: an expired exchanged token is exchanged again.
    return Tokens(tokens.access_token, "", tokens.expires_at, tokens.scope)
