"""The Streamable HTTP endpoint ``/mcp`` as a plain ASGI application.

[L] basic/transports.mdx "Streamable HTTP" (2025-03-26, 2025-06-18, 2025-11-25, and 2024-11-05
clients that speak it) and [26] basic/transports/streamable-http.mdx. Routing per request:

- POST with a 2026-07-28 body (``params._meta`` names the revision) → ``Server.handle_stateless``;
  no session header is minted or echoed.
- POST ``initialize`` → a new session; ``Mcp-Session-Id`` on the response.
- any other POST / GET / DELETE → the session named by ``Mcp-Session-Id`` (missing → 400, unknown,
  expired, another principal's or another endpoint's → 404). GET/DELETE sent as 2026-07-28 → 405.

It never reads ``scope["path"]``: a project mounts it at any prefix through Channels
(``mcp_django/routing.py``), beside Django's handler, not behind it. The router names a virtual
server's slug (``/mcp/<slug>``) in ``url_route``; ``endpoints.route`` turns it into the server's
runtime view, or a 404 before the caller is resolved, and a session is only found on the endpoint
that made it (``Session.endpoint``). The hot path (tools/call in
JSON mode) does no middleware, no database, and spawns no task of its own. Header rules live in
``headers.py`` and ``security.py``, the body in ``body.py``, legacy POST streams in ``streams.py``,
2026-07-28 POSTs in ``modern.py``, GET streams and resumes in ``get_stream.py`` and ``replay.py``,
and the one mapping from exceptions to wire errors in ``responses.py``.
"""

from __future__ import annotations

import asyncio
from time import perf_counter
from typing import Any

from .. import tracing
from ..auth import principal as caller
from ..auth.principal import Principal
from ..auth.step_up import STEPPED
from ..endpoint_views import select
from ..endpoints import SCOPE_KEY
from ..errors import InvalidRequest, MCPError
from ..jsonrpc import Notification, Request, Response, dumps, error_id, error_response, parse_body
from ..outbound import NullOutbound
from ..session import Session
from ..versions import allows_batch, names_modern_era
from . import logcontext, metrics

# open_mode: MCP["PRINCIPAL_RESOLVER"]'s default names it here (mcp_protocol.transports.http.open_mode).
from .auth import PrincipalResolver, open_mode, presented_token, resolve_caller, step_up
from .body import ClientGone, read_body
from .browser import send_page, wants_page
from .endpoints import route
from .get_stream import serve_get
from .headers import (
    RequestHeaders,
    check_content_type,
    check_get_accept,
    check_post_accept,
    check_session_version,
    check_supported_version,
    parse_headers,
)
from .host import RuntimeHost
from .modern import serve_modern
from .replay import SessionView
from .responses import (
    JSON_HEADERS,
    HTTPError,
    Receive,
    Scope,
    Send,
    TrackedSend,
    logger,
    send_bytes,
    send_empty,
    send_error,
)
from .runtime import Runtime
from .session_messages import deliver, save_if_changed
from .streams import PostStream

SESSION_HEADER = b"mcp-session-id"
REQUEST_ID = "mcpsite.request_id"  # scope key: the id of the request being served, once read
ALLOW = [(b"allow", b"GET, POST, DELETE")]
_NULL = NullOutbound()
__all__ = ["MCPEndpoint", "PrincipalResolver", "era_of", "open_mode"]


def era_of(rt: Runtime, headers: RequestHeaders, message: Request | Notification | Response) -> str:
    """Which era's rules serve this POST ("modern" or "legacy"); docs/reference/endpoint.md "How
    `/mcp` answers".

    Modern when the body's ``_meta`` names a protocol version (whatever the method, ``initialize``
    included). Otherwise an ``initialize`` is legacy (it starts a session, whatever its header
    says); and any other message is modern when the ``MCP-Protocol-Version`` header names
    2026-07-28 or later, so that it fails the modern envelope rules (-32602 for the missing
    ``_meta``) instead of being taken for a legacy message without a session. The rest — the
    requests of legacy sessions — is legacy.
    """
    if rt.server.is_modern_request(message):
        return "modern"
    if isinstance(message, Request) and message.method == "initialize":
        return "legacy"
    return "modern" if names_modern_era(headers.protocol_version) else "legacy"


class MCPEndpoint:
    """Serves with the runtime ``host`` holds for the running loop (handed in: ``mcp_django``'s
    ``mcp_path`` hands the process's ``MCPService``)."""

    def __init__(
        self,
        host: RuntimeHost,
        resolve_principal: PrincipalResolver | None = None,
        *,
        default: str | None = None,
    ) -> None:
        self.host = host
        # None: the runtime's resolver (MCP['PRINCIPAL_RESOLVER'], or MCP_AUTH's; open mode unless set).
        self.resolve_principal = resolve_principal
        # What a path naming no virtual server serves (MCP["DEFAULT_SERVER"], endpoints.py): None,
        # the catch-all; a slug, that server; OFF, nothing (404).
        self.default = default

    async def principal(self, rt: Runtime, scope: Scope) -> Principal:
        return await resolve_caller(self.resolve_principal or rt.resolve_principal, scope)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        tracked = TrackedSend(send)
        rt: Runtime | None = None
        started = perf_counter()
        logcontext.bind(scope)
        try:
            rt = self.host.current() or await self.host.runtime()
            headers = parse_headers(scope["headers"])
            server = scope.get("server")
            rt.guard.check(headers.host or "", headers.origin, server[0] if server else None)
            # Which server the path names: 404 for none, before the caller is resolved (auth reads
            # the spec it leaves in the scope); a virtual server's runtime view otherwise.
            rt = route(rt, scope, self.default)
            # Who is calling, before anything else is answered; bound for the request, so the core
            # serves what the principal's grant lets it see (auth/scopes.py).
            who = await self.principal(rt, scope)
            scope[logcontext.PRINCIPAL] = who.id
            bound = caller.bind(who)
            # The caller's own OAuth token, for a token exchange (RFC 8693) made for it; never logged.
            subject = presented_token(who, scope)
            shown = caller.present(who, subject) if subject is not None else None
            try:
                method = scope["method"]
                if method == "POST":
                    if rt.server.tracing is None:
                        await self.post(rt, scope, receive, tracked, headers)
                    else:
                        parent = headers.traceparent, headers.tracestate
                        with tracing.http_request(*parent, method, scope["path"]):
                            await self.post(rt, scope, receive, tracked, headers)
                elif method == "GET":
                    # Served from this frame, not from one more coroutine's: a GET stream may stay
                    # open for hours, and each frame it keeps alive is ~300 B per idle stream.
                    view = await self.get(rt, scope, tracked, headers)
                    if view is not None:
                        await serve_get(rt, tracked, receive, view, headers.last_event_id)
                elif method == "DELETE":
                    await self.delete(rt, scope, tracked, headers)
                else:
                    raise HTTPError(405, f"Method Not Allowed: {method}", headers=ALLOW)
            finally:
                if shown is not None:
                    caller.withdraw(shown)
                caller.unbind(bound)
        except ClientGone:
            return
        except Exception as exc:
            if tracked.started:
                logger.error("error after the response started on /mcp", exc_info=exc)
                return
            # The request's id once its body was read ([11] transports.mdx: an error response MAY
            # have no id; one the client can match is better).
            request_id = error_id(exc)
            await send_error(send, exc, request_id if request_id is not None else scope.get(REQUEST_ID))
        finally:
            if rt is not None and rt.config.metrics:
                # The one place requests are counted (metrics.py); the handlers only left notes
                # in the scope. A 503 before the runtime exists is counted as a Redis error.
                metrics.record(scope, tracked.status, perf_counter() - started, rt.provider)

    # -- sessions -------------------------------------------------------------------------------
    async def _session(self, rt: Runtime, scope: Scope, headers: RequestHeaders) -> Session:
        session_id = headers.session_id
        if not session_id:
            raise HTTPError(400, "Bad Request: Mcp-Session-Id header is required")
        session = await rt.sessions.load(session_id)
        # Another principal's session, or another endpoint's (a session belongs to the server
        # that made it), is as unknown as an expired one (no existence oracle).
        if (
            session is None
            or session.principal != caller.current().id
            or session.endpoint != rt.server.endpoint_key
        ):
            raise HTTPError(404, "Session not found")
        return session

    # -- POST -----------------------------------------------------------------------------------
    async def post(
        self, rt: Runtime, scope: Scope, receive: Receive, send: Send, headers: RequestHeaders
    ) -> None:
        check_post_accept(headers)
        check_content_type(headers)
        parsed = parse_body(await read_body(receive, rt.config.max_body, headers.content_length))
        if isinstance(parsed, list):
            scope[metrics.METHOD], scope[metrics.ERA] = "batch", "legacy"
            await self.batch(rt, scope, receive, send, headers, parsed)
            return
        if isinstance(parsed, Request):
            scope[REQUEST_ID] = parsed.id
            if rt.access.verifier is not None and parsed.method in STEPPED:
                # The endpoint's own selection (a definition outside it is unknown, not a 403);
                # on a virtual server the 403 names its metadata (auth/endpoint_access.py).
                served = select(rt.provider.snapshot(), rt.server.endpoint)
                step_up(rt.access, served, parsed.method, parsed.params, scope.get(SCOPE_KEY))
        await self.message(rt, scope, receive, send, headers, parsed)

    async def message(
        self, rt: Runtime, scope: Scope, receive: Receive, send: Send, headers: RequestHeaders,
        message: Request | Notification | Response,
    ) -> None:
        if isinstance(message, Request | Notification):
            scope[metrics.METHOD] = message.method
            if message.method == "tools/call":
                counted = rt.server.tool_search.counted_as(message.params or {})
                scope[metrics.TOOL], scope[metrics.META_TOOL] = counted
        else:
            scope[metrics.METHOD] = "response"
        if era_of(rt, headers, message) == "modern":
            scope[metrics.ERA] = "modern"
            if isinstance(message, Response):
                # [26] streamable-http.mdx "Sending Messages": the client MUST NOT send responses.
                raise HTTPError(400, "Invalid Request: 2026-07-28 clients send no JSON-RPC responses")
            await serve_modern(rt, scope, receive, send, headers, message)
            return
        scope[metrics.ERA] = "legacy"
        if isinstance(message, Request) and message.method == "initialize":
            await self.initialize(rt, scope, send, headers, message)
            return
        session = await self._session(rt, scope, headers)
        check_session_version(headers.protocol_version, session.protocol_version)
        if isinstance(message, Response):
            await rt.pending.deliver(session.id, message)
            await send_empty(send, 202)
        elif isinstance(message, Notification):
            await deliver(rt, session, message)
            await save_if_changed(rt, session)
            await send_empty(send, 202)
        else:
            stream = PostStream(rt, session, send, receive, request_ids=[message.id])
            try:
                response = await stream.run(rt.server.handle(message, session, stream))
                scope[metrics.RESPONSE] = response
                await save_if_changed(rt, session)
                await stream.finish([response] if response is not None else [])
            finally:
                await stream.close()

    async def initialize(
        self, rt: Runtime, scope: Scope, send: Send, headers: RequestHeaders, message: Request
    ) -> None:
        check_supported_version(headers.protocol_version)
        session = Session.create(caller.current().id, endpoint=rt.server.endpoint_key)
        response = await rt.server.handle(message, session, _NULL)
        extra: list[tuple[bytes, bytes]] = []
        if response is not None and "result" in response:
            try:
                await rt.sessions.create(session)
            except Exception as exc:
                await send_error(send, exc, message.id)
                return
            # [L] transports.mdx "Session Management": the id goes on the InitializeResult response.
            extra.append((SESSION_HEADER, session.id.encode("ascii")))
        await send_bytes(send, 200, dumps(response), [*JSON_HEADERS, *extra])

    async def batch(
        self,
        rt: Runtime,
        scope: Scope,
        receive: Receive,
        send: Send,
        headers: RequestHeaders,
        items: list[Any],
    ) -> None:
        if any(isinstance(i, Request) and i.method == "initialize" for i in items):
            raise InvalidRequest("Invalid Request: initialize MUST NOT be part of a JSON-RPC batch")
        session = await self._session(rt, scope, headers)
        check_session_version(headers.protocol_version, session.protocol_version)
        if not allows_batch(session.protocol_version):
            # Batching exists only in 2025-03-26 (removed by 2025-06-18 changelog).
            raise InvalidRequest(
                f"Invalid Request: JSON-RPC batches are not supported in {session.protocol_version}"
            )
        responses: list[dict[str, Any]] = []
        requests: list[Request] = []
        for item in items:
            if isinstance(item, MCPError):
                responses.append(error_response(error_id(item), item))
            elif isinstance(item, Response):
                await rt.pending.deliver(session.id, item)
            elif isinstance(item, Notification):
                await deliver(rt, session, item)
            else:
                requests.append(item)
        if not requests and not responses:
            await save_if_changed(rt, session)
            await send_empty(send, 202)
            return
        stream = PostStream(rt, session, send, receive, request_ids=[r.id for r in requests])

        async def run_all() -> dict[str, Any] | None:
            results = await asyncio.gather(*(rt.server.handle(r, session, stream) for r in requests))
            responses.extend(r for r in results if r is not None)
            return None

        try:
            await stream.run(run_all())
            await save_if_changed(rt, session)
            await stream.finish(responses, batch=True)
        finally:
            await stream.close()

    # -- GET ------------------------------------------------------------------------------------
    async def get(self, rt: Runtime, scope: Scope, send: Send, headers: RequestHeaders) -> SessionView | None:
        """Check a GET and find its session: what ``serve_get`` streams (``None``: answered here)."""
        if names_modern_era(headers.protocol_version):
            raise HTTPError(
                405, "Method Not Allowed: 2026-07-28 has no GET stream", headers=[(b"allow", b"POST")]
            )
        if wants_page(headers):
            await send_page(send)  # a person with a browser, not a client (browser.py)
            return None
        check_get_accept(headers)
        session = await self._session(rt, scope, headers)
        check_session_version(headers.protocol_version, session.protocol_version)
        # The stream may stay open for hours: it keeps its session's id and version only, not
        # the whole record (~3 KB per idle stream with its parsed JSON, tracemalloc).
        return SessionView(session.id, session.protocol_version)

    # -- DELETE ---------------------------------------------------------------------------------
    async def delete(self, rt: Runtime, scope: Scope, send: Send, headers: RequestHeaders) -> None:
        if names_modern_era(headers.protocol_version):
            raise HTTPError(
                405, "Method Not Allowed: 2026-07-28 has no sessions", headers=[(b"allow", b"POST")]
            )
        session = await self._session(rt, scope, headers)
        check_session_version(headers.protocol_version, session.protocol_version)  # [06+] F
        await rt.end_session(session.id)
        await send_empty(send, 200)
