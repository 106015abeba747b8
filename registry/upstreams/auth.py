"""The headers an upstream gets: none, a static header whose value is an environment variable, or
an OAuth 2.1 client-credentials access token (RFC 6749 §4.4), fetched from the token URL and kept
per process until shortly before it expires.

Secrets come from the environment only, and only from variables an http tool could send
(``registry/kinds/http_client/secret_env.py``: ``REGISTRY_HTTP_SECRET_ENV_PREFIXES`` /
``REGISTRY_HTTP_SECRET_ENV_ALLOWED``), so naming ``SECRET_KEY`` or ``DATABASE_URL`` sends nothing.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

import httpx2

from ..kinds.http_client import secret_env
from .config import UpstreamConfig
from .errors import UpstreamRefused, UpstreamUnauthorized, UpstreamUnavailable
from .guard import GuardedTransport, check_url

EXPIRY_MARGIN = 30.0  # seconds: a token this close to expiry is fetched again
MAX_TOKEN_BYTES = 64 * 1024


@dataclass(frozen=True, slots=True)
class _Token:
    value: str
    expires_at: float  # time.monotonic()


# (token URL, client id, scopes, secret variable) -> token. Per process: every worker fetches its own.
_tokens: dict[tuple[str, str, tuple[str, ...], str], _Token] = {}


def secret(config: UpstreamConfig) -> str:
    name = config.auth_secret_env
    if not name:
        raise UpstreamRefused(f"{config.name}: auth {config.listing_auth} needs auth_secret_env "
                              "(an environment variable)")
    if not secret_env.allowed(name):
        raise UpstreamRefused(f"{config.name}: {name} may not be sent: {secret_env.rule()}")
    value = os.environ.get(name)
    if not value:
        raise UpstreamRefused(f"{config.name}: the environment variable {name} is not set")
    return value


def _key(config: UpstreamConfig) -> tuple[str, str, tuple[str, ...], str]:
    return (config.oauth_token_url, config.oauth_client_id, config.oauth_scopes, config.auth_secret_env)


def forget_token(config: UpstreamConfig) -> None:
    """Drop the cached token (the upstream answered 401: it may have been revoked)."""
    _tokens.pop(_key(config), None)


async def _fetch_token(config: UpstreamConfig) -> _Token:
    check_url(config.oauth_token_url)
    form = {"grant_type": "client_credentials", "client_id": config.oauth_client_id,
            "client_secret": secret(config)}
    if config.oauth_scopes:
        form["scope"] = " ".join(config.oauth_scopes)
    timeout = httpx2.Timeout(config.timeout, connect=config.connect_timeout)
    try:
        async with httpx2.AsyncClient(transport=GuardedTransport(), timeout=timeout) as client:
            response = await client.post(config.oauth_token_url, data=form,
                                         headers={"Accept": "application/json"})
    except httpx2.HTTPError as exc:
        raise UpstreamUnavailable(f"{config.name}: the token endpoint failed: {exc!r}") from None
    if response.status_code in (400, 401, 403):
        raise UpstreamUnauthorized(
            f"{config.name}: the token endpoint refused the client ({response.status_code})")
    if response.status_code != 200 or len(response.content) > MAX_TOKEN_BYTES:
        raise UpstreamUnavailable(f"{config.name}: the token endpoint answered {response.status_code}")
    try:
        body = response.json()
        value, lifetime = body["access_token"], float(body.get("expires_in", 300))
    except (ValueError, KeyError, TypeError):
        raise UpstreamUnavailable(f"{config.name}: the token endpoint's answer has no access_token") from None
    if not isinstance(value, str) or not value:
        raise UpstreamUnavailable(f"{config.name}: the token endpoint's access_token is not a string")
    return _Token(value, time.monotonic() + max(lifetime - EXPIRY_MARGIN, 0.0))


async def headers(config: UpstreamConfig) -> dict[str, str]:
    """The headers every request to the upstream carries when no user is calling (UpstreamRefused,
    UpstreamUnavailable): a ``user`` upstream's listing credential (``sync_auth``) then. A
    per-user session sends the user's token instead (``connect.py``, ``Handshake.bearer``)."""
    kind = config.listing_auth
    if kind == "header":
        return {config.auth_header: secret(config)}
    if kind == "client_credentials":
        token = _tokens.get(_key(config))
        if token is None or token.expires_at <= time.monotonic():
            token = _tokens[_key(config)] = await _fetch_token(config)
        return {"Authorization": f"Bearer {token.value}"}
    return {}
