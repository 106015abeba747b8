"""Who is calling ``/mcp``: the auth seam (``PrincipalResolver``) and the resolver of ``MCP_AUTH``.

A ``PrincipalResolver`` turns a request's scope into its caller. ``open_mode`` (the default) lets
everyone in as anonymous; ``resolver(access)`` asks the ``AccessPolicy`` (``auth/policy.py``:
API keys and/or OAuth) and turns its refusals into the HTTP answer, 401 (or 403
``insufficient_scope``) with the ``WWW-Authenticate`` challenge and a JSON-RPC error body. The
token itself is never logged. ``resolve_caller`` is the one place every transport turns a
resolver's answer into the ``Principal`` it binds.

On a virtual server the router has put its ``EndpointSpec`` in the scope (``endpoints.SCOPE_KEY``)
before the caller is resolved: ``resolver(access)`` hands it to the policy, which applies the
endpoint's own access (``auth/endpoint_access.py``) in every ``MCP_AUTH`` mode, open included.
A custom ``MCP["PRINCIPAL_RESOLVER"]`` decides alone: an endpoint's access is not applied then.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any

from ..auth import principal as caller
from ..auth.policy import AccessPolicy, AuthError
from ..auth.principal import Principal
from ..definitions import Snapshot
from ..endpoints import SCOPE_KEY, EndpointSpec
from .responses import HTTPError, Scope

# Who is calling, from the request's scope: a principal id, None (open mode), a ``Principal``
# (an id with a grant: auth/principal.py), or an awaitable of one of these (a resolver that reads
# a session or a token); raising HTTPError(401, ...) refuses the call.
Resolved = Principal | str | None
PrincipalResolver = Callable[[Scope], Resolved | Awaitable[Resolved]]


def open_mode(scope: Scope) -> str | None:
    """The auth seam: who is calling. Open mode (no authentication) → ``None`` for everyone.
    (``MCP["PRINCIPAL_RESOLVER"]`` names it as ``mcp_protocol.transports.http.open_mode``, which
    re-exports it.)"""
    return None


async def resolve_caller(resolve: PrincipalResolver, scope: Scope) -> Principal:
    """What ``resolve`` answers for this request, as a ``Principal``."""
    found = resolve(scope)
    # A resolver may answer at once (``resolver`` for keys) or with an awaitable; a Principal is
    # returned as it is, without asking inspect.isawaitable (~0.3 µs a request).
    if not isinstance(found, Principal) and inspect.isawaitable(found):
        found = await found
    if isinstance(found, Principal):
        return found
    return caller.ANONYMOUS if found is None else Principal(found, label=found)


def presented_token(who: Principal, scope: Scope) -> str | None:
    """The bearer token ``who`` was verified from, when it is an OAuth access token (``who.token``:
    the policy verified a JWT), for ``caller.present``; None for keys, open mode, custom resolvers."""
    if who.token is None:
        return None
    scheme, _, token = (_authorization(scope) or "").strip().partition(" ")
    return (token.strip() or None) if scheme.lower() == "bearer" else None


def _authorization(scope: Scope) -> str | None:
    for name, value in scope["headers"]:
        if name == b"authorization":
            return str(value.decode("latin-1"))
    return None


def resolver(access: AccessPolicy) -> PrincipalResolver:
    """The resolver of ``access``'s mode; on ``/mcp`` in open mode, nothing is asked."""

    async def resolve(scope: Scope) -> Principal:
        try:
            return await access.authenticate(_authorization(scope), scope.get(SCOPE_KEY))
        except AuthError as exc:
            raise _refusal(exc) from None

    if access.mode == "open":
        def resolve_open(scope: Scope) -> Resolved | Awaitable[Resolved]:
            return None if scope.get(SCOPE_KEY) is None else resolve(scope)

        return resolve_open
    if access.mode == "keys":
        # Keys only: answered synchronously on /mcp (``resolve_caller`` takes either), no coroutine.
        def resolve_key(scope: Scope) -> Principal | Awaitable[Principal]:
            if scope.get(SCOPE_KEY) is not None:
                return resolve(scope)
            try:
                return access.authenticate_key(_authorization(scope))
            except AuthError as exc:
                raise _refusal(exc) from None

        return resolve_key

    return resolve


def step_up(access: AccessPolicy, snapshot: Snapshot, method: str, params: Any,
            endpoint: EndpointSpec | None = None) -> None:
    """403 ``insufficient_scope`` for an OAuth token short of a scope (``auth/step_up.py``); on a
    virtual server (``endpoint``) the challenge names the endpoint's metadata."""
    try:
        access.step_up(caller.current(), snapshot, method, params, endpoint)
    except AuthError as exc:
        raise _refusal(exc) from None


def _refusal(exc: AuthError) -> HTTPError:
    challenge = exc.challenge.encode("latin-1")
    return HTTPError(exc.status, exc.message, headers=[(b"www-authenticate", challenge)])
