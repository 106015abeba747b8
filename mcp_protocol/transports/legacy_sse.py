"""The deprecated HTTP+SSE transport of 2024-11-05, for old clients (2024-11-05
basic/transports.mdx "HTTP with SSE"; checklist §5, item 74 of §U).

- ``GET /sse`` opens the connection: a new session, whose first event is ``endpoint`` with the
  URI to POST to (``messages?session_id=<id>``, relative to the SSE URL, so it follows wherever
  both are mounted); then every server message for the session as an SSE ``message`` event.
- ``POST /messages?session_id=<id>`` carries one client message: 202 at once, and the answer goes
  out on the SSE stream ("All subsequent client messages MUST be sent as HTTP POST requests to
  this endpoint"; "Server messages are sent as SSE events named message").

Same core, registry, auth seam and stores as ``/mcp``: the session lives in the session store,
and the connection *is* its standalone stream: answers, notifications, server→client requests and
registry changes are appended to its log in the event store (``STANDALONE_STREAM``), which the GET
tails. So a POST on worker B reaches the SSE stream held on worker A, and a client's answer to a
sampling request reaches the handler wherever it waits (the session's bus channel). Requests run in
the background (the client may need to POST an answer before their result exists); the
connection closing ends the session and stops them. Origin/Host checks are those of ``/mcp``.
"""

from __future__ import annotations

import asyncio
from collections.abc import MutableMapping
from typing import Any
from urllib.parse import parse_qs

from ..auth import principal as caller
from ..jsonrpc import Notification, Request, Response, error_id, parse_body
from ..session import Session
from ..store_errors import StoreUnavailable
from ..stores.events import STANDALONE_STREAM
from . import logcontext
from .auth import presented_token, resolve_caller
from .body import ClientGone, read_body
from .endpoints import SLUG_KWARG, route
from .headers import check_content_type, check_get_accept, parse_headers
from .host import RuntimeHost
from .pending import CancelWatch
from .replay import serve_log
from .responses import HTTPError, Receive, Scope, Send, TrackedSend, logger, send_empty, send_error
from .runtime import Runtime
from .session_messages import deliver, save_if_changed
from .stream_log import PRIME

_TASKS: set[asyncio.Task[None]] = set()  # requests running in the background (kept referenced)
# A request's response is written this long after the progress notifications before it, so that
# they reach the client in separate reads. The TypeScript SDK 1.x (and so mcp-remote and every
# client built on it) handles a notification in a microtask but a response at once: when both come
# out of one read of the socket, the response removes the request's progress handler first and
# the last progress is dropped ("unknown token"; typescript-sdk issue #2580). Separate HTTP chunks
# are not enough: written back to back they land in one read. Only on this deprecated transport,
# and only for a request that reported progress (/mcp's POST streams are unaffected).
PROGRESS_GAP_SECONDS = 0.05
# How long the stream keeps its connection while the store (Redis) is unavailable. A 2024-11-05
# client cannot resume a stream (no Last-Event-ID): a stream ended by an outage is a session lost,
# and the registry changes announced meanwhile with it (issue 38 item 4). Past this, it ends.
RIDE_OUT_SECONDS = 30.0


def _endpoint_event(session_id: str, scope: Scope) -> bytes:
    # Relative to the GET's URL (RFC 3986 §5.2): ".../sse" → ".../messages?session_id=…"; for a
    # virtual server, ".../sse/<slug>" → ".../messages/<slug>?session_id=…" (one more segment
    # up when the client's URL ended with a slash).
    named = scope.get("url_route")
    slug = named["kwargs"].get(SLUG_KWARG) if named is not None else None
    if slug is None:
        target = b"messages"
    else:
        up = b"../../" if scope["path"].endswith("/") else b"../"
        target = up + b"messages/" + slug.encode("ascii")
    return b"event: endpoint\ndata: " + target + b"?session_id=" + session_id.encode("ascii") + b"\n\n"


class LegacySSEEndpoint:
    """Both routes of the old transport: GET → the SSE stream, POST → a client message; served
    with the runtime ``host`` holds for the running loop, as ``/mcp``; ``/sse/<slug>`` and
    ``/messages/<slug>`` serve the virtual server ``slug`` (``endpoints.py``), whose sessions are
    unknown on any other path. ``default``: what ``/sse`` serves, as ``MCPEndpoint``'s."""

    def __init__(self, host: RuntimeHost, *, default: str | None = None) -> None:
        self.host = host
        self.default = default

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        tracked = TrackedSend(send)
        try:
            rt = self.host.current() or await self.host.runtime()
            headers = parse_headers(scope["headers"])
            server = scope.get("server")
            rt.guard.check(headers.host or "", headers.origin, server[0] if server else None)
            rt = route(rt, scope, self.default)  # 404 for a path naming no server, before auth
            # Resolved and bound as on /mcp, so a key's grant limits what this transport serves too.
            who = await resolve_caller(rt.resolve_principal, scope)
            scope[logcontext.PRINCIPAL] = who.id
            bound = caller.bind(who)
            # The caller's own OAuth token, for a token exchange (RFC 8693) made for it; never logged.
            subject = presented_token(who, scope)
            shown = caller.present(who, subject) if subject is not None else None
            try:
                if scope["method"] == "GET":
                    check_get_accept(headers)
                    await self.stream(rt, scope, receive, tracked)
                elif scope["method"] == "POST":
                    check_content_type(headers)
                    await self.message(rt, scope, receive, tracked, headers.content_length)
                else:
                    raise HTTPError(405, "Method Not Allowed", headers=[(b"allow", b"GET, POST")])
            finally:
                if shown is not None:
                    caller.withdraw(shown)
                caller.unbind(bound)
        except ClientGone:
            return
        except Exception as exc:
            if tracked.started:
                logger.error("error after the response started on the HTTP+SSE transport", exc_info=exc)
                return
            await send_error(send, exc, error_id(exc))

    # -- GET: the connection ----------------------------------------------------------------------
    async def stream(self, rt: Runtime, scope: Scope, receive: Receive, send: Send) -> None:
        session = Session.create(caller.current().id, endpoint=rt.server.endpoint_key)
        await rt.sessions.create(session)
        try:
            start = await rt.events.append(session.id, STANDALONE_STREAM, PRIME)
            endpoint = _endpoint_event(session.id, scope)
            pending = [endpoint]

            async def first_send(message: MutableMapping[str, Any]) -> None:
                # The endpoint event goes before anything else on the stream.
                if message["type"] == "http.response.body" and pending:
                    message = {**message, "body": pending.pop() + message.get("body", b"")}
                await send(message)

            async def alive() -> bool:  # ends the stream once the session is gone (expiry)
                try:
                    return await rt.sessions.load(session.id) is not None
                except StoreUnavailable:
                    return True  # the store is away: serve_log rides it out, or ends the stream


            await serve_log(
                rt, session, first_send, receive, STANDALONE_STREAM, start, on_tick=alive, fresh=True,
                progress_gap=PROGRESS_GAP_SECONDS, ride_out=RIDE_OUT_SECONDS,
            )
        finally:
            # The connection was the session: it ends with it, here and on every worker.
            await rt.sessions.delete(session.id)
            rt.session_ended(session.id)
            await rt.pending.end_session(session.id)
            await rt.events.delete_session(session.id)

    # -- POST: one client message -----------------------------------------------------------------
    async def message(
        self, rt: Runtime, scope: Scope, receive: Receive, send: Send, content_length: str | None
    ) -> None:
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        session_id = (query.get("session_id") or [""])[0]
        if not session_id:
            raise HTTPError(400, "Bad Request: session_id is required")
        parsed = parse_body(await read_body(receive, rt.config.max_body, content_length))
        if isinstance(parsed, list):
            raise HTTPError(400, "Invalid Request: the HTTP+SSE transport takes one message per POST")
        session = await rt.sessions.load(session_id)
        # Another principal's or another endpoint's session: unknown, as on /mcp.
        mine = session is not None and session.endpoint == rt.server.endpoint_key
        if session is None or not mine or session.principal != caller.current().id:
            gone = HTTPError(404, "Session not found")
            if isinstance(parsed, Request):
                gone.request_id = parsed.id  # type: ignore[attr-defined]  # the id is readable: echo it
            raise gone
        if isinstance(parsed, Response):
            await rt.pending.deliver(session.id, parsed)
        elif isinstance(parsed, Notification):
            await deliver(rt, session, parsed)
            await save_if_changed(rt, session)
        else:
            task = asyncio.create_task(_serve(rt, session, parsed))
            _TASKS.add(task)
            task.add_done_callback(_TASKS.discard)
        await send_empty(send, 202)


async def _serve(rt: Runtime, session: Session, message: Request) -> None:
    """Run one request and put its answer on the session's stream (wherever it is held)."""
    watch = CancelWatch(rt.pending, session.id)  # a cancel or the connection's end may come via the bus
    watch.start()
    try:
        response = await rt.server.handle(message, session, rt.standalone(session))
        await save_if_changed(rt, session)
        if response is not None:
            await rt.events.append(session.id, STANDALONE_STREAM, response)
    except Exception:
        logger.exception("HTTP+SSE request %s of session %s failed", message.method, session.id)
    finally:
        await watch.stop()
