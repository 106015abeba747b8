"""``AccessPolicy``: everything that decides who may call what on ``/mcp``, built once per runtime
from a config mapping (``MCP["ACCESS"]`` merged over the adapter's defaults: ``mcp_django/conf.py``)
and the objects it names, built by the caller: the key source, the rate limiter, the audit sink.

Modes (``MODE``, env ``MCP_AUTH``): ``open`` (no credentials; everyone is ``ANONYMOUS``),
``keys`` (API keys, ``keys.py``), ``oauth`` (JWT access tokens, ``oauth.py``) or ``keys,oauth``
(a token that looks like an API key is one; any other is a JWT). ``authenticate`` turns the
``Authorization`` header into a ``Principal`` or raises ``AuthError`` carrying the status and the
``WWW-Authenticate`` challenge (RFC 6750 §3; MCP basic/authorization.mdx: 401 with
``resource_metadata`` and ``scope`` in oauth mode, 403 ``insufficient_scope``).

On a virtual server (``/mcp/<slug>``: ``authenticate``'s ``endpoint``) its ``EndpointAccess``
decides (``endpoint_access.py``): the modes it accepts, the keys and scopes that may use it, the
audience a token must carry (its own resource URL), and the metadata its challenge names. So an
endpoint may take a kind of credential the deployment's ``MCP_AUTH`` does not: the key ring is
built whenever there is a key source (every mode, by default) and started on the first key an
endpoint has to check when ``MCP_AUTH`` has no keys; the token verifier is built whenever an
issuer is configured (``MCP_OAUTH_ISSUER``), whatever ``MCP_AUTH`` says. Without an issuer, no
token is ever accepted (there is nothing to verify it against): an endpoint with only ``oauth``
then lets nobody in (docs/guides/auth.md, "Auth per virtual server").

When a key's grant changes, the sessions of that key get what ``fanout.notifications`` maps a
grant change to (``notifications/tools|resources|prompts/list_changed``) on their standalone
stream, written by the fan-out's writer like a registry change: once across workers, and taken
over from a writer that died midway (``fanout/writer.py``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from ..bus.base import Bus
from ..definitions import Snapshot
from ..endpoints import EndpointSpec
from ..fanout.notifications import Change
from ..fanout.writer import ChangeWriter
from ..provider import ProviderCapabilities
from ..stores.events import EventStore
from ..stores.sessions import SessionStore
from . import endpoint_access as rules
from .audit import AuditQueue, AuditSink
from .guard import Guard
from .keys import KeyRing, KeySource, looks_like_key
from .limits import RateLimiter
from .oauth import JWKS, Fetch, InsufficientScope, InvalidToken, TokenVerifier
from .principal import ANONYMOUS, Grant, Principal, Rate
from .revocations import Revocations
from .step_up import needed_scopes

logger = logging.getLogger("mcp_protocol.auth")

MODES = ("open", "keys", "oauth", "keys,oauth")


metadata_url = rules.metadata_url


class AuthError(Exception):
    def __init__(self, status: int, message: str, challenge: str) -> None:
        super().__init__(message)
        self.status, self.message, self.challenge = status, message, challenge


class AccessPolicy:
    """``config`` holds ``MODE``, the rates, the audit queue's bounds, ``RESOURCE_URL`` and the
    ``OAUTH_*`` values; ``key_source`` is required in a mode with keys; ``capabilities``: the
    provider's, so a grant change notifies only the lists the server declares; ``jwks_fetch``:
    how the JWKS is read (default: an HTTP GET of its URL; an authorization server in this very
    process hands its own key set over, with no request to itself)."""

    def __init__(self, config: Mapping[str, Any], bus: Bus, sessions: SessionStore, events: EventStore,
                 *, limiter: RateLimiter, key_source: KeySource | None = None,
                 audit_sink: AuditSink | None = None,
                 capabilities: ProviderCapabilities | None = None,
                 jwks_fetch: Fetch | None = None, revocations: Revocations | None = None,
                 on_audit_drop: Callable[[str, int], None] | None = None) -> None:
        mode = str(config["MODE"]).replace(" ", "")
        if mode not in MODES:
            raise ValueError(f"MCP_AUTH must be one of {', '.join(MODES)}, not {mode!r}")
        self.mode = mode
        self.modes = rules.deployment_modes(mode)
        self.sessions, self.events = sessions, events
        # Given by the runtime at ``start``: ends the streams and sessions of principals whose key
        # stopped working.
        self.on_revoke: Callable[[set[str]], Awaitable[None]] | None = None
        # A grant change is written like any change (its notifications: what the server declares).
        self.writer = ChangeWriter(sessions, events)
        self.capabilities = capabilities or ProviderCapabilities()
        self._writes: set[asyncio.Task[None]] = set()
        self.keys: KeyRing | None = None
        self.verifier: TokenVerifier | None = None
        self.resource_url = str(config["RESOURCE_URL"])
        self.scopes_supported = sorted(config["OAUTH_SCOPES"])
        if "keys" in mode and key_source is None:
            raise ValueError(f"MCP_AUTH={mode} needs a key source")
        if key_source is not None:  # in every mode: a virtual server may accept keys
            self.keys = KeyRing(key_source, bus, on_change=self.scope_changed, on_revoke=self._revoked)
        self._ring_started: asyncio.Lock | None = None
        issuer = config["OAUTH_ISSUER"]
        if "oauth" in mode and not issuer:
            raise ValueError("MCP_AUTH=oauth needs MCP_OAUTH_ISSUER")
        if issuer:  # in every mode: a virtual server may accept tokens
            jwks_url = config["OAUTH_JWKS_URL"] or f"{issuer.rstrip('/')}/.well-known/jwks.json"
            min_refresh = float(config["OAUTH_JWKS_MIN_REFRESH"])
            jwks = (JWKS(jwks_url, min_refresh=min_refresh) if jwks_fetch is None
                    else JWKS(jwks_url, fetch=jwks_fetch, min_refresh=min_refresh))
            scopes = {s: Grant.from_spec(g) for s, g in config["OAUTH_SCOPES"].items()}
            self.verifier = TokenVerifier(issuer=issuer, audience=self.resource_url, jwks=jwks,
                                          algorithms=config["OAUTH_ALGORITHMS"], scopes=scopes,
                                          leeway=float(config["OAUTH_LEEWAY"]),
                                          require_typ=bool(config["OAUTH_REQUIRE_TYP"]))
        self.revocations = revocations  # revoked OAuth grants (auth/revocations.py), if the AS says
        self.audit: AuditQueue | None = None
        if audit_sink is not None:
            self.audit = AuditQueue(audit_sink,
                                    size=int(config["AUDIT_QUEUE_SIZE"]),
                                    max_bytes=int(config["AUDIT_ARGUMENTS_MAX_BYTES"]),
                                    on_drop=on_audit_drop)
        self.guard = Guard(
            limiter, rate=Rate.parse(config["RATE"]), tool_rate=Rate.parse(config["TOOL_RATE"]),
            tool_rates={name: r for name, spec in (config["TOOL_RATES"] or {}).items()
                        if (r := Rate.parse(spec)) is not None},
            max_in_flight=config["MAX_IN_FLIGHT"], audit=self.audit)

    async def start(self, on_revoke: Callable[[set[str]], Awaitable[None]] | None = None) -> None:
        """Start the key ring, the revocation watch and the audit queue. ``on_revoke``: what the
        runtime that serves with this policy does when principals stop being valid."""
        self.on_revoke = on_revoke
        if self.keys is not None and "keys" in self.modes:
            await self.keys.start()  # otherwise when a virtual server first checks a key
        if self.revocations is not None:
            await self.revocations.start()
        if self.audit is not None:
            self.audit.start()

    async def close(self) -> None:
        if self.keys is not None:
            await self.keys.close()
        if self.revocations is not None:
            await self.revocations.close()
        for write in list(self._writes):
            write.cancel()
        if self._writes:
            await asyncio.wait(self._writes)
        if self.audit is not None:
            await self.audit.close()
        await self.guard.limiter.close()

    # -- who is calling ---------------------------------------------------------------------------
    def challenge(self, error: str | None = None, scopes: Sequence[str] | None = None,
                  endpoint: EndpointSpec | None = None) -> str:
        """The ``WWW-Authenticate`` value: where an endpoint that takes tokens publishes its RFC
        9728 metadata (a virtual server's own, ``/.well-known/oauth-protected-resource/mcp/<slug>``)
        and the scopes to ask for (the endpoint's, else the deployment's); ``realm`` otherwise."""
        params = []
        oauth = ("oauth" in self.modes if endpoint is None
                 else "oauth" in rules.credential_kinds(endpoint, self.modes))
        if self.verifier is not None and oauth:
            resource = rules.resource_url(self.resource_url, endpoint)
            params.append(f'resource_metadata="{metadata_url(resource)}"')
            if scopes is None and endpoint is not None and endpoint.access.scopes is not None:
                scopes = sorted(endpoint.access.scopes)
            named = self.scopes_supported if scopes is None else scopes
            if named:
                params.append(f'scope="{" ".join(named)}"')
        else:
            params.append('realm="mcp"')
        if error is not None:
            params.append(f'error="{error}"')
        return "Bearer " + ", ".join(params)

    async def authenticate(self, authorization: str | None,
                           endpoint: EndpointSpec | None = None) -> Principal:
        """The caller of ``/mcp`` (``endpoint`` None) or of the virtual server ``endpoint``."""
        if endpoint is not None:
            return await self._endpoint_caller(authorization, endpoint)
        if self.mode == "open":
            return ANONYMOUS
        token = self._bearer(authorization)
        # What MCP_AUTH names, only (the ring and the verifier may exist for virtual servers).
        if "keys" in self.modes and ("oauth" not in self.modes or looks_like_key(token)):
            return self._key(token)
        return await self._token(token, None)

    def step_up(self, principal: Principal, snapshot: Snapshot, method: str, params: Any,
                endpoint: EndpointSpec | None = None) -> None:
        """``AuthError`` 403 ``insufficient_scope`` naming every scope the request needs, when an
        OAuth token lacks the scope for a definition another scope grants (``step_up.py``)."""
        if self.verifier is None:
            return
        needed = needed_scopes(principal, self.verifier.scopes, snapshot, method, params)
        if needed is not None:
            raise AuthError(403, "Forbidden: insufficient scope",
                            self.challenge("insufficient_scope", needed, endpoint))

    # -- a virtual server's caller (endpoint_access.py) --------------------------------------------
    async def _endpoint_caller(self, authorization: str | None, endpoint: EndpointSpec) -> Principal:
        modes = rules.accepted(endpoint, self.modes)
        kinds = rules.credential_kinds(endpoint, self.modes)
        if not kinds:  # open only, on a deployment that verifies nothing: as /mcp in open mode
            return ANONYMOUS
        presented = bool((authorization or "").strip())
        if not presented and "open" in modes:
            return ANONYMOUS
        token = self._bearer(authorization, endpoint)
        kind = "keys" if looks_like_key(token) else "oauth"
        if kind not in kinds:
            raise self._invalid(endpoint)
        if kind == "keys":
            principal = self._key(token, endpoint, await self._ring())
            if not rules.key_allowed(endpoint, self.keys.prefix(principal) if self.keys else None):
                raise AuthError(403, "Forbidden: this key may not use this server",
                                self.challenge("insufficient_scope", None, endpoint))
            return principal
        principal = await self._token(token, endpoint)
        if not rules.scope_allowed(endpoint, principal.scopes):
            raise AuthError(403, "Forbidden: insufficient scope",
                            self.challenge("insufficient_scope", None, endpoint))
        return principal

    async def _ring(self) -> KeyRing | None:
        """The key ring, started: at ``start`` when ``MCP_AUTH`` has keys, else here, once, when
        a virtual server first has a key to check (a deployment that never does loads none)."""
        ring = self.keys
        if ring is None or ring.started:
            return ring
        if self._ring_started is None:
            self._ring_started = asyncio.Lock()
        async with self._ring_started:
            if not ring.started:
                await ring.start()
        return ring

    async def _token(self, token: str, endpoint: EndpointSpec | None) -> Principal:
        if self.verifier is None:
            raise self._invalid(endpoint)
        audience = rules.resource_url(self.resource_url, endpoint)
        try:
            principal = await self.verifier.verify(token, audience)
            if not self._granted(principal):
                raise InvalidToken("its grant was revoked")
            return principal
        except InvalidToken as exc:
            logger.info("refused an access token: %s", exc)  # the reason, never the token
            raise self._invalid(endpoint) from None
        except InsufficientScope:
            raise AuthError(403, "Forbidden: insufficient scope",
                            self.challenge("insufficient_scope", None, endpoint)) from None

    def authenticate_key(self, authorization: str | None) -> Principal:
        """``authenticate`` for ``MCP_AUTH=keys``, without a coroutine: a key needs no I/O (the
        ring is in memory), and two coroutines per request were ~1 µs of the key check."""
        assert self.keys is not None and "oauth" not in self.modes
        return self._key(self._bearer(authorization))

    def _bearer(self, authorization: str | None, endpoint: EndpointSpec | None = None) -> str:
        scheme, _, token = (authorization or "").strip().partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            # RFC 6750 §3.1: a request without credentials gets no error code.
            raise AuthError(401, "Unauthorized: a bearer token is required",
                            self.challenge(endpoint=endpoint))
        return token

    def _invalid(self, endpoint: EndpointSpec | None) -> AuthError:
        return AuthError(401, "Unauthorized: invalid token", self.challenge("invalid_token", None, endpoint))

    def _key(self, token: str, endpoint: EndpointSpec | None = None,
             ring: KeyRing | None = None) -> Principal:
        ring = ring or self.keys
        principal = None if ring is None else ring.resolve(token)
        if principal is None:
            raise self._invalid(endpoint)
        return principal

    def still_valid(self, principal: Principal, now: float | None = None) -> bool:
        """Would the credential ``principal`` came with still be accepted? (A stream asks at each
        keep-alive: a revoked or expired key, or an expired token, ends it.)"""
        if principal.expires_at is not None and (time.time() if now is None else now) >= principal.expires_at:
            return False
        if self.keys is not None and str(principal.id).startswith("key:"):
            return self.keys.alive(principal)
        return self._granted(principal)

    def _granted(self, principal: Principal) -> bool:
        """False for an OAuth token whose grant was revoked since it was issued."""
        token = principal.token
        return self.revocations is None or token is None or not self.revocations.revoked(*token)

    async def _revoked(self, principals: set[str]) -> None:
        if self.on_revoke is not None:
            await self.on_revoke(principals)

    # -- a key's grant changed ------------------------------------------------------------------
    async def scope_changed(self, change_id: str, principals: set[str]) -> None:
        """Every list may have changed for the sessions of ``principals``: written by the fan-out's
        writer (once across workers; a writer that died midway is taken over, as for a registry
        change), in a task of its own: the key ring's next reload (a revocation) waits for no write."""
        write = asyncio.ensure_future(self._write_grant(f"access:{change_id}", principals))
        self._writes.add(write)
        write.add_done_callback(self._writes.discard)

    async def _write_grant(self, key: str, principals: set[str]) -> None:
        try:
            await self.writer.write(key, Change.of_grant(principals), self.capabilities)
        except Exception:
            logger.exception("could not notify the sessions of %d keys of their new grant", len(principals))
