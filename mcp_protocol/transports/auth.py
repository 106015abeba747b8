"""Authentication on ``/mcp``: the ``Authorization`` header → the request's ``Principal``.

The endpoint's ``resolve_principal`` seam defaults to ``authenticate``, which asks the runtime's
``Access`` (``auth/access.py``, mode from ``MCP_AUTH``) and turns its refusals into the HTTP
answer: 401 (or 403 ``insufficient_scope``) with the ``WWW-Authenticate`` challenge and a JSON-RPC
error body. The token itself is never logged.
"""

from __future__ import annotations

from ..auth.access import AuthError
from ..auth.principal import ANONYMOUS, Principal
from .responses import HTTPError, Scope
from .runtime import current, get_runtime


async def authenticate(scope: Scope) -> Principal:
    rt = current() or await get_runtime()
    access = rt.access
    if access.mode == "open":
        return ANONYMOUS
    authorization = None
    for name, value in scope["headers"]:
        if name == b"authorization":
            authorization = value.decode("latin-1")
            break
    try:
        return await access.authenticate(authorization)
    except AuthError as exc:
        raise HTTPError(exc.status, exc.message,
                        headers=[(b"www-authenticate", exc.challenge.encode("latin-1"))]) from None


async def open_mode(scope: Scope) -> Principal:
    """No authentication: everyone is the anonymous principal."""
    return ANONYMOUS
