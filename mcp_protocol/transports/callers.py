"""What every transport of this package does around a message, whoever carries it: who the
caller is (the auth seam, ``PrincipalResolver``), how a notification is delivered, and how a
session a request changed is saved. ``transports/http.py`` (Streamable HTTP) and
``transports/legacy_sse.py`` (the 2024-11-05 HTTP+SSE transport) both use it."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable

from ..auth import principal as caller
from ..auth.principal import Principal
from ..jsonrpc import Notification
from ..outbound import NullOutbound
from ..session import Session
from ..stores.errors import UpdateError
from .pending import CANCELLED
from .responses import Scope
from .runtime import Runtime

# Who is calling, from the request's scope: a principal id, None (open mode), a ``Principal``
# (an id with a grant: auth/principal.py), or an awaitable of one of these (a resolver that reads
# a session or a token); raising HTTPError(401, ...) refuses the call.
Resolved = Principal | str | None
PrincipalResolver = Callable[[Scope], Resolved | Awaitable[Resolved]]
_NULL = NullOutbound()


def open_mode(scope: Scope) -> str | None:
    """The auth seam: who is calling. Open mode (no authentication) → ``None`` for everyone.
    (``MCP["PRINCIPAL_RESOLVER"]`` names it as ``mcp_protocol.transports.http.open_mode``, which
    re-exports it.)"""
    return None


async def resolve_caller(resolve: PrincipalResolver, scope: Scope) -> Principal:
    """What ``resolve`` answers for this request, as a ``Principal`` (the one place every
    transport of this package turns a resolver's answer into the caller it binds)."""
    found = resolve(scope)
    # A resolver may answer at once (``auth.resolver`` for keys) or with an awaitable; a Principal
    # is returned as it is, without asking inspect.isawaitable (~0.3 µs a request).
    if not isinstance(found, Principal) and inspect.isawaitable(found):
        found = await found
    if isinstance(found, Principal):
        return found
    return caller.ANONYMOUS if found is None else Principal(found, label=found)


async def save_if_changed(rt: Runtime, session: Session) -> None:
    if session.dirty:
        try:
            await rt.sessions.save(session)
        except UpdateError:
            pass  # deleted meanwhile (DELETE on another request): the answer still goes out


async def deliver(rt: Runtime, session: Session, message: Notification) -> None:
    """A notification from the client: a cancellation goes to wherever the request runs, the
    rest to the server's handlers (no response: nothing to send back)."""
    if message.method == CANCELLED:
        # [L] basic/utilities/cancellation.mdx: the request may be running on another worker.
        await rt.pending.cancel(session.id, message.params)
    else:
        await rt.server.handle(message, session, _NULL)
