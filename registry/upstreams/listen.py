"""One upstream's listen stream, held open: every ``notifications/{tools,resources,prompts}/
list_changed`` the upstream sends is told to ``changed`` until the stream ends.

Where the stream is, by era (the SDK's client negotiates it in ``connect``):

- 2025-03-26 to 2025-11-25, Streamable HTTP (Basic > Transports > Streamable HTTP, "Listening for
  Messages from the Server"): a GET of the MCP endpoint opens an SSE stream for server messages;
  a server that offers none "MUST either return Content-Type: text/event-stream ... or else return
  HTTP 405 Method Not Allowed". The SDK's client opens it after the handshake and reconnects it
  twice before giving up quietly, so a ``ping`` every ``PROBE`` seconds tells a live session from
  a dead one (an upstream restarted answers 404, one killed refuses the connection): the caller
  then reconnects. The 2024-11-05 HTTP+SSE transport's one SSE stream carries everything; the
  same ping watches it.
- 2026-07-28 (basic/patterns/subscriptions.mdx): no standing GET stream; ``subscriptions/listen``
  is a request whose response is the stream. The SDK's ``listen`` driver says when it drops
  (``SubscriptionLost``).

An upstream whose capabilities announce ``listChanged`` for none of the lists (the spec's promise
to send the notifications: Server > Tools/Resources/Prompts > Capabilities), that answers the GET
405, or that does not serve ``subscriptions/listen`` raises ``NoListenStream``: the periodic sync
keeps it current. The stream is not the calls' pooled session (``pool.py``): one session per
upstream per fleet, owned by the lease holder (``keeper.py``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import httpx2
import mcp_types as types
from mcp.client import subscriptions
from mcp.client.session import ClientSession
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from .config import UpstreamConfig
from .connect import connect
from .errors import NoListenStream

PROBE = 5.0  # s between pings of a handshake-era session

# The notifications that change a list, by method (handshake era) and by event type (listen).
METHODS = {
    "notifications/tools/list_changed": "tools",
    "notifications/resources/list_changed": "resources",
    "notifications/prompts/list_changed": "prompts",
}
EVENTS = {
    subscriptions.ToolsListChanged: "tools",
    subscriptions.ResourcesListChanged: "resources",
    subscriptions.PromptsListChanged: "prompts",
}

Changed = Callable[[str], None]  # the list that changed: tools | resources | prompts | "reconnected"


def announced(session: ClientSession) -> set[str]:
    """The lists whose changes the upstream promises to announce (``listChanged``)."""
    caps = session.server_capabilities
    out = set()
    for kind in ("tools", "resources", "prompts"):
        capability = getattr(caps, kind, None) if caps is not None else None
        if capability is not None and getattr(capability, "list_changed", None):
            out.add(kind)
    return out


async def hold(config: UpstreamConfig, changed: Changed, *, probe: float = PROBE) -> str:
    """Open the upstream's listen stream and hold it until it ends; why it ended. ``changed`` gets
    ``"reconnected"`` once the stream is open (what changed while nobody listened is unknown: the
    caller refetches), then each list's name as the upstream announces its change.

    Raises ``NoListenStream``, and ``UpstreamError`` when the upstream cannot be reached."""
    no_get = asyncio.Event()

    async def observe(response: httpx2.Response) -> None:
        if response.request.method == "GET" and response.status_code == 405:
            no_get.set()

    async def handler(message: Any) -> None:
        kind = METHODS.get(getattr(message, "method", ""))
        if kind is not None:
            changed(kind)

    # Decided inside the session, raised or returned after it: an exception leaving the SDK's
    # task groups comes out wrapped in an ExceptionGroup, and a session closing on a dead
    # upstream may raise one of its own once the outcome is known.
    outcome: str | NoListenStream | None = None
    try:
        async with connect(config, message_handler=handler, observer=observe) as session:
            outcome = await _hold(session, changed, no_get, probe)
    except Exception:
        if outcome is None:
            raise
    if isinstance(outcome, NoListenStream):
        raise outcome
    return outcome if outcome is not None else "the session ended"


async def _hold(session: ClientSession, changed: Changed, no_get: asyncio.Event,
                probe: float) -> str | NoListenStream:
    kinds = announced(session)
    if not kinds:
        return NoListenStream("the upstream announces no listChanged capability")
    if session.protocol_version in MODERN_PROTOCOL_VERSIONS:
        return await _listen(session, kinds, changed)
    changed("reconnected")
    while True:
        try:
            await asyncio.wait_for(no_get.wait(), probe)
        except TimeoutError:
            pass
        else:
            return NoListenStream("the upstream answered the GET stream 405 Method Not Allowed")
        try:
            await session.send_ping()  # bounded by the session's read timeout (the row's)
        except Exception as exc:
            return f"the session ended ({type(exc).__name__}: {exc})"


async def _listen(session: ClientSession, kinds: set[str], changed: Changed) -> str | NoListenStream:
    """2026-07-28: ``subscriptions/listen`` for the announced lists, held until it ends."""
    try:
        async with subscriptions.listen(
            session, tools_list_changed="tools" in kinds, resources_list_changed="resources" in kinds,
            prompts_list_changed="prompts" in kinds,
        ) as stream:
            changed("reconnected")
            async for event in stream:
                kind = EVENTS.get(type(event))
                if kind is not None:
                    changed(kind)
    except subscriptions.SubscriptionLost as exc:
        return f"the upstream dropped the listen stream ({exc})"
    except MCPError as exc:
        if exc.error.code == types.METHOD_NOT_FOUND:
            return NoListenStream("the upstream does not serve subscriptions/listen")
        return f"the listen request failed ({exc})"
    return "the upstream closed the listen stream"
