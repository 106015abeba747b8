"""What a legacy GET on ``/mcp`` serves once its session is known: the session's standalone SSE
stream, or the resume of one POST stream named by ``Last-Event-ID``.

[L] basic/transports.mdx "Listening for Messages from the Server" (at most one standalone stream
per session, claimed cluster-wide) and "Resumability and Redelivery" (a resume gets the rest of
the stream its event belongs to, and only it). Serving the log itself is ``replay.py``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..stores.events import STANDALONE_STREAM, parse_event_id
from .replay import SessionView, serve_log
from .responses import HTTPError, Receive, Send
from .stream_log import PRIME

if TYPE_CHECKING:
    from .runtime import Runtime

CLAIM_MIN_TTL = 10.0


async def serve_get(rt: Runtime, send: Send, receive: Receive, view: SessionView, after: str | None) -> None:
    """Serve the GET of session ``view`` carrying Last-Event-ID ``after`` (None: a new stream)."""
    stream_id = parse_event_id(after)[0] if after else STANDALONE_STREAM
    if stream_id != STANDALONE_STREAM:
        # [11] "Resumability": resume the POST stream that event belongs to, and only it.
        async def alive() -> bool:  # ended on another worker (DELETE, expiry): stop waiting
            return await rt.sessions.load(view.id) is not None

        async with rt.leases.watch_orphan(view.id, stream_id):  # its worker may be dead
            await serve_log(rt, view, send, receive, stream_id, after, on_tick=alive)
        return
    owner = rt.pending.new_id()
    ttl = max(rt.config.keepalive * 3, CLAIM_MIN_TTL)  # refreshed at every keep-alive
    # A GET carrying the standalone stream's Last-Event-ID is the client resuming a stream it
    # lost: it takes the claim over, so a worker that died (or has not noticed the drop yet)
    # does not keep it out with 409s until the claim lapses; the old holder's next
    # heartbeat fails and ends its stream. A plain second GET still gets 409.
    if not await rt.events.claims.claim_stream(view.id, owner, ttl, take_over=after is not None):
        raise HTTPError(409, "Conflict: only one standalone SSE stream is allowed per session")

    async def heartbeat() -> bool:
        # Keep the cluster-wide claim, and end the stream once the session is gone.
        return await rt.events.claims.refresh_stream(view.id, owner, ttl) and await rt.sessions.touch(view.id)

    try:
        start = after
        if start is None:
            # A new stream starts now: what the log holds went to earlier streams (or to none)
            # and must not be delivered twice ([L] transports.mdx: a message goes on one
            # stream). Its start is a log position, so the priming event ([11]) can name it.
            start = await rt.events.append(view.id, STANDALONE_STREAM, PRIME)
        await serve_log(rt, view, send, receive, STANDALONE_STREAM, start, on_tick=heartbeat,
                        fresh=after is None)
    finally:
        await rt.events.claims.release_stream(view.id, owner)
