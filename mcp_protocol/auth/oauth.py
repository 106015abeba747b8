"""OAuth 2.1 resource server: validating access tokens (JWTs) against the authorization server's
JWKS (MCP basic/authorization.mdx, 2025-06-18 and later; RFC 9068 profile).

Checks, each one a reason to refuse the token (→ 401 ``invalid_token``):

- the header is a JSON object whose ``alg`` (and ``kid``, ``typ`` when present) are strings; any
  other header is a malformed token like any other, never an error of ours;
- the header's ``alg`` is in the allow-list (``none`` and every ``HS*`` are never accepted: a
  resource server holds only public keys, and an HMAC "signed" with a public key is a forgery)
  and is the one the key was published for: a JWK with ``alg`` signs that algorithm only
  (RFC 8725 §3.1: a PS256 token never verifies against an RS256 key); a JWK without ``alg`` any
  algorithm of its key type;
- ``typ`` (RFC 9068 §4): when the issuer types its token explicitly it is ``at+jwt`` (or
  ``application/at+jwt``), so a logout token, a DPoP proof or another explicitly typed JWT of the
  issuer is never taken for an access token. No ``typ``, or the generic ``JWT`` (RFC 7519 §5.1,
  what most libraries write by default), says nothing and is accepted unless ``require_typ``
  (``MCP_OAUTH_REQUIRE_TYP``, for issuers that set ``at+jwt``) asks for it;
- the ``kid`` names a key of the JWKS (fetched from ``jwks_url``, cached for ``JWKS_TTL``; an
  unknown ``kid`` triggers one refetch, at most every ``min_refresh`` seconds, so rotated keys work
  and garbage tokens cannot make us hammer the AS; every fetch is bounded by ``fetch_timeout``);
- the signature, ``iss`` == the configured issuer, ``aud`` contains this server's canonical
  resource URL (RFC 8707; the spec: tokens for other resources MUST be rejected): ``/mcp``'s, or
  a virtual server's own (``verify``'s ``audience``: ``<RESOURCE_URL>/<slug>``), ``exp`` and
  ``nbf`` with ``leeway`` seconds, and a ``sub``.

The principal is (issuer, subject); its grant is the union of the grants its scopes map to
(``scope`` claim, space-separated, or ``scp`` list). A valid token whose scopes map to nothing is
``InsufficientScope`` (→ 403). Verified tokens are cached by digest until they expire, so the hot
path verifies a signature once per token, not once per request.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import time
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import jwt

from ..compat.pyjwt import published_alg
from .principal import Grant, Principal

logger = logging.getLogger("mcp_protocol.auth")

JWKS_TTL = 600.0
CACHE_MAX = 10000
SAFE_ALGORITHMS = frozenset({"RS256", "RS384", "RS512", "PS256", "PS384", "PS512",
                             "ES256", "ES384", "ES512", "EdDSA"})
ACCESS_TOKEN_TYPES = frozenset({"at+jwt", "application/at+jwt"})  # RFC 9068 §4, case-insensitive
UNTYPED = frozenset({"jwt", "application/jwt"})  # RFC 7519 §5.1: a JWT of no particular kind


class InvalidToken(Exception):
    """The token is not one we accept (RFC 6750 ``invalid_token``); the message is for logs only."""


class InsufficientScope(Exception):
    """A valid token whose scopes grant nothing here (RFC 6750 ``insufficient_scope``)."""


Fetch = Callable[[str, float], bytes]


def _http_get(url: str, timeout: float) -> bytes:
    request = urllib.request.Request(url, headers={"Accept": "application/json"})
    with urllib.request.urlopen(request, timeout=timeout) as response:  # the configured JWKS URL
        body: bytes = response.read(1024 * 1024)
        return body


class JWKS:
    def __init__(self, url: str, *, fetch: Fetch = _http_get, fetch_timeout: float = 5.0,
                 min_refresh: float = 10.0, ttl: float = JWKS_TTL) -> None:
        self.url, self.fetch, self.fetch_timeout = url, fetch, fetch_timeout
        self.min_refresh, self.ttl = min_refresh, ttl
        self._keys: dict[str, jwt.PyJWK] = {}
        self._fetched_at = -1e18
        self._pending: asyncio.Future[None] | None = None

    async def key(self, kid: str | None) -> jwt.PyJWK:
        now = time.monotonic()
        if self._pending is not None:
            await asyncio.shield(self._pending)  # a fetch is under way: its keys, not a refusal
        elif now - self._fetched_at > self.ttl or (kid not in self._keys
                                                    and now - self._fetched_at >= self.min_refresh):
            await self.refresh()
        if kid is None and len(self._keys) == 1:
            return next(iter(self._keys.values()))
        found = self._keys.get(kid or "")
        if found is None:
            raise InvalidToken(f"unknown key id {kid!r}")
        return found

    async def refresh(self) -> None:
        """Fetch the JWKS; concurrent callers share one fetch."""
        if self._pending is None:
            self._fetched_at = time.monotonic()  # even on failure: refetches stay bounded
            pending = self._pending = asyncio.ensure_future(self._fetch())
            pending.add_done_callback(self._done)
        await asyncio.shield(self._pending)

    def _done(self, pending: asyncio.Future[None]) -> None:
        if self._pending is pending:
            self._pending = None

    async def _fetch(self) -> None:
        try:
            raw = await asyncio.wait_for(
                asyncio.to_thread(self.fetch, self.url, self.fetch_timeout), self.fetch_timeout + 1)
            keys = jwt.PyJWKSet.from_dict(json.loads(raw)).keys
        except Exception as exc:
            logger.warning("could not fetch the JWKS at %s: %s", self.url, exc)
            return
        found = {str(k.key_id): k for k in keys if k.key_id is not None}
        if len(keys) == 1 and keys[0].key_id is None:
            found[""] = keys[0]
        self._keys = found


class TokenVerifier:
    def __init__(self, *, issuer: str, audience: str, jwks: JWKS, algorithms: Sequence[str],
                 scopes: Mapping[str, Grant], leeway: float = 30.0, require_typ: bool = False) -> None:
        unsafe = {a for a in algorithms if a not in SAFE_ALGORITHMS}
        if unsafe:
            raise ValueError(f"algorithms not allowed for a resource server: {sorted(unsafe)}")
        self.issuer, self.audience, self.jwks = issuer, audience, jwks
        self.algorithms = frozenset(algorithms)
        self.scopes = dict(scopes)
        self.leeway = leeway
        self.require_typ = require_typ
        self._cache: dict[str, tuple[Principal, float]] = {}

    async def verify(self, token: str, audience: str | None = None) -> Principal:
        """The token's principal, if it is for ``audience`` (default: this server's resource URL;
        a virtual server passes its own, ``endpoint_access.resource_url``)."""
        audience = audience or self.audience
        # Cached per (token, audience): a token verified for one endpoint is checked again, and
        # refused, on another whose resource it is not for.
        key = hashlib.sha256(f"{audience}\n{token}".encode("utf-8", "surrogateescape")).digest()
        hit = self._cache.get(key.hex())
        now = time.time()
        if hit is not None and now < hit[1] + self.leeway:
            return hit[0]
        principal, expires = await self._verify(token, audience)
        if len(self._cache) >= CACHE_MAX:
            self._cache = {k: v for k, v in self._cache.items() if v[1] + self.leeway > now}
            if len(self._cache) >= CACHE_MAX:
                self._cache.clear()
        self._cache[key.hex()] = (principal, expires)
        return principal

    def _header(self, token: str) -> tuple[str, str | None]:
        """The header's ``alg`` and ``kid``, checked; ``InvalidToken`` for anything malformed."""
        try:
            header = jwt.get_unverified_header(token)
        except (jwt.PyJWTError, ValueError, TypeError) as exc:
            raise InvalidToken(f"malformed token: {exc}") from None
        alg, kid, typ = header.get("alg"), header.get("kid"), header.get("typ")
        if not isinstance(alg, str) or not isinstance(kid, str | None) or not isinstance(typ, str | None):
            raise InvalidToken("malformed token: alg, kid and typ must be strings")
        if alg not in self.algorithms:
            raise InvalidToken(f"algorithm {alg!r} is not allowed")
        typed = typ is not None and typ.lower() not in UNTYPED
        if typed and str(typ).lower() not in ACCESS_TOKEN_TYPES:
            raise InvalidToken(f"typ {typ!r} is not an access token's (RFC 9068 §4: at+jwt)")
        if self.require_typ and not typed:
            raise InvalidToken("the token is not typed at+jwt, which MCP_OAUTH_REQUIRE_TYP asks for")
        return alg, kid

    async def _verify(self, token: str, audience: str) -> tuple[Principal, float]:
        alg, kid = self._header(token)
        jwk = await self.jwks.key(kid)
        pinned = published_alg(jwk)  # as published (RFC 7517 §4.4), not defaulted
        if pinned is not None and pinned != alg:
            raise InvalidToken(f"key {jwk.key_id!r} is published for {pinned}, not {alg}")
        if pinned is None and not _fits(jwk, alg):
            raise InvalidToken(f"key {jwk.key_id!r} is not for {alg}")
        try:
            claims: dict[str, Any] = jwt.decode(
                token, key=jwk.key, algorithms=[alg], audience=audience, issuer=self.issuer,
                leeway=self.leeway, options={"require": ["exp", "iss", "aud", "sub"]})
        except (jwt.PyJWTError, ValueError, TypeError) as exc:
            raise InvalidToken(str(exc)) from None
        granted = [self.scopes[s] for s in _scopes(claims) if s in self.scopes]
        if not granted:
            raise InsufficientScope("no scope of this token grants anything here")
        grant = granted[0]
        for other in granted[1:]:
            grant = grant.union(other)
        subject = str(claims["sub"])
        principal = Principal(f"oauth:{self.issuer} {subject}", grant, f"{self.issuer} {subject}",
                              expires_at=float(claims["exp"]) + self.leeway, scopes=tuple(_scopes(claims)),
                              token=(subject, str(claims.get("client_id") or ""), _number(claims.get("iat"))))
        return principal, float(claims["exp"])


def _fits(jwk: jwt.PyJWK, alg: str) -> bool:
    """A JWK without ``alg`` may sign any algorithm of its key type."""
    family = {"RSA": ("RS", "PS"), "EC": ("ES",), "OKP": ("EdDSA",)}.get(str(jwk.key_type), ())
    return jwk.Algorithm is not None and alg.startswith(family) if family else False


def _number(value: Any) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def _scopes(claims: Mapping[str, Any]) -> list[str]:
    scope = claims.get("scope")
    if isinstance(scope, str):
        return scope.split()
    scp = claims.get("scp")
    if isinstance(scp, list):
        return [str(s) for s in scp]
    return []
