"""What every transport of this package does with a message inside a session, whoever carries
it: how a notification from the client is delivered, and how a session a request changed is
saved. ``transports/http.py`` (Streamable HTTP) and ``transports/legacy_sse.py`` (the 2024-11-05
HTTP+SSE transport) both use it; who the caller is lives in ``auth.py``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..jsonrpc import Notification
from ..outbound import NullOutbound
from ..session import Session
from ..store_errors import UpdateError
from .pending import CANCELLED

if TYPE_CHECKING:
    from .runtime import Runtime

_NULL = NullOutbound()


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
