"""Authentication on ``/mcp``: the ``Authorization`` header → the request's ``Principal``.

With ``MCP_AUTH`` other than ``open`` (and ``MCP['PRINCIPAL_RESOLVER']`` left at its default) the
runtime resolves principals with ``resolver(access)``: it asks ``Access`` (``auth/access.py``) and
turns its refusals into the HTTP answer, 401 (or 403 ``insufficient_scope``) with the
``WWW-Authenticate`` challenge and a JSON-RPC error body. The token itself is never logged.
``authenticate`` is the same as a dotted path, for ``mcp_path(..., resolve_principal=...)``.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable

from ..auth.access import Access, AuthError
from ..auth.principal import Principal
from .responses import HTTPError, Scope


def _authorization(scope: Scope) -> str | None:
    for name, value in scope["headers"]:
        if name == b"authorization":
            return str(value.decode("latin-1"))
    return None


def resolver(access: Access) -> Callable[[Scope], Principal | Awaitable[Principal]]:
    if access.mode == "keys":
        # Keys only: answered synchronously (``resolve_caller`` takes either), no coroutine.
        def resolve_key(scope: Scope) -> Principal:
            try:
                return access.authenticate_key(_authorization(scope))
            except AuthError as exc:
                raise _refusal(exc) from None

        return resolve_key

    async def resolve(scope: Scope) -> Principal:
        try:
            return await access.authenticate(_authorization(scope))
        except AuthError as exc:
            raise _refusal(exc) from None

    return resolve


def _refusal(exc: AuthError) -> HTTPError:
    challenge = exc.challenge.encode("latin-1")
    return HTTPError(exc.status, exc.message, headers=[(b"www-authenticate", challenge)])


async def authenticate(scope: Scope) -> Principal:
    """``MCP_AUTH`` as a resolver of its own (the running loop's runtime's ``Access``)."""
    from .runtime import current, get_runtime

    rt = current() or await get_runtime()
    found = resolver(rt.access)(scope)
    return await found if inspect.isawaitable(found) else found
