"""Messages to a session that belong to no client request: they go on its standalone GET stream.

[L] basic/transports.mdx "Listening for Messages from the Server": the server may send requests
and notifications on the stream a client opens with GET, unrelated to any request of the client.
Such a message is appended to the session's standalone log (``STANDALONE_STREAM``) in the event
store, which the session's GET stream reads on whichever worker it is open (now, or after a
resume with Last-Event-ID): the store is the delivery, so this works from any worker, a
background task or an admin action in a server process alike. The answer to a server→client
request comes back in a POST to any worker and reaches the waiting caller through the session's
bus channel (``pending.py``).

Not for messages about a client request (progress, logs, sampling inside a tool call): those go
on that request's own stream (``streams.PostStream``).
"""

from __future__ import annotations

from typing import Any

from ..errors import ClientRequestError
from ..jsonrpc import notification
from ..outbound import Outbound
from ..session import Session
from ..stores.events import STANDALONE_STREAM, EventStore
from .pending import PendingRequests, ask

# [06+] lifecycle.mdx: a server sends these only to a client that declared the capability.
CAPABILITY_OF = {
    "sampling/createMessage": "sampling",
    "elicitation/create": "elicitation",
    "roots/list": "roots",
}


class StandaloneOutbound(Outbound):
    def __init__(self, events: EventStore, pending: PendingRequests, session: Session) -> None:
        self.events, self.pending, self.session = events, pending, session

    async def notify(self, method: str, params: dict[str, Any] | None) -> None:
        await self.events.append(self.session.id, STANDALONE_STREAM, notification(method, params))

    async def request(self, method: str, params: dict[str, Any] | None, timeout: float) -> dict[str, Any]:
        capability = CAPABILITY_OF.get(method)
        if capability is not None and capability not in self.session.client_capabilities:
            raise ClientRequestError(
                f"The client did not declare the {capability!r} capability needed for {method}")

        async def send(message: dict[str, Any]) -> None:
            await self.events.append(self.session.id, STANDALONE_STREAM, message)

        return await ask(self.pending, self.session.id, send, method, params, timeout)
