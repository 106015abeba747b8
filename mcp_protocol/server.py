"""The protocol core: method tables, lifecycle and capability gating, errors → responses.

``Server.handle`` serves one legacy-era message against a ``Session`` the transport loaded;
``Server.handle_stateless`` serves one 2026-07-28 message whose state travels in ``params._meta``.
Both return the whole JSON-RPC response object for a request (``None`` for a notification, or for
a request the client cancelled: basic/utilities/cancellation.mdx "not send a response"). This is
the single place where exceptions become wire errors: ``MCPError`` → its error object (with
``ResourceNotFound`` renumbered per revision); anything else is logged with its traceback and
answered with a generic -32603 that leaks nothing. The core never sees HTTP or stdio.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import logging
from collections.abc import Callable, Sequence
from typing import Any

from . import jsonrpc, tracing, versions
from .approvals import Approvals
from .auth.principal import current as current_principal
from .changefeed import ChangeFeed
from .context import DEFAULT_CLIENT_REQUEST_TIMEOUT, Context
from .definitions import Snapshot
from .endpoints import CATCH_ALL, EndpointSpec, ToolSearch
from .errors import (
    InternalError,
    InvalidRequest,
    MCPError,
    MethodNotFound,
    RequestCancelled,
    ResourceNotFound,
    WorkerStopped,
)
from .features import narrowed
from .inflight import InFlight, take_back
from .inputs import InputRound, questions, start_round
from .jsonrpc import Notification, Request
from .method_table import LEGACY_METHODS, MODERN_METHODS, gate_open
from .methods import tool_search
from .methods.base import Call, Handler, Interceptor
from .methods.list_filter import capability as list_filter_capability
from .methods.modern import (
    META_PROTOCOL_VERSION,
    decorate_result,
    stateless_session,
)
from .methods.tools import execute_tool
from .methods.wire_cache import WireCache
from .outbound import Outbound
from .pagination import Paginator
from .provider import Provider, ProviderCapabilities
from .request_state import RequestStateSealer
from .session import Session
from .shapes import check_params
from .skills import EXTENSION as SKILLS_EXTENSION
from .store_errors import StoreUnavailable
from .tasks.runner import TaskRunner
from .tasks.wire import EXTENSION, LEGACY_CAPABILITY
from .tracing import RequestTracing

logger = logging.getLogger(__name__)


class Server:
    def __init__(
        self,
        provider: Provider,
        *,
        name: str,
        version: str,
        title: str | None = None,
        instructions: str | None = None,
        page_size: int = 100,
        cursor_secret: bytes,
        client_request_timeout: float = DEFAULT_CLIENT_REQUEST_TIMEOUT,
        cache_ttl_ms: int = 0,
        cache_scope: str = "private",
        request_state_keys: Sequence[bytes] = (),
        request_state_ttl: float = 900.0,
        interceptor: Interceptor | None = None,
        tracing: RequestTracing | None = None,
        icons: tuple[dict[str, Any], ...] | None = None,
        website_url: str | None = None,
        description: str | None = None,
        tool_search: ToolSearch | None = None,
        list_filter: bool = False,
        search_ranking: str = "default",
        approvals: Approvals | None = None,
    ) -> None:
        self.provider = provider
        self.name = name
        self.version = version
        self.title = title
        self.instructions = instructions
        self.icons, self.website_url, self.description = icons, website_url, description
        self.paginator = Paginator(cursor_secret, page_size)
        # Without keys of its own, requestState is keyed from the cursor secret (domain-separated).
        keys = list(request_state_keys) or [hashlib.sha256(b"mcp-request-state:" + cursor_secret).digest()]
        self.request_state = RequestStateSealer(keys, request_state_ttl)
        # Kept so each virtual server derives keys of its own from them (endpoint_servers.py).
        self.cursor_secret, self.request_state_keys = cursor_secret, tuple(keys)
        self.client_request_timeout = client_request_timeout
        # Lists can change at any moment (admin edits) and may vary by principal: by default
        # clients may not reuse them, nor may shared caches.
        self.cache_ttl_ms = cache_ttl_ms
        self.cache_scope = cache_scope
        self.wire_cache = WireCache()
        # Committed changes, as this process learns them, for subscriptions/listen streams.
        self.feed = ChangeFeed()
        self.inflight = InFlight()
        # Runs each request instead of its handler when set: rate limits and audit (auth/guard.py).
        self.interceptor = interceptor
        # Spans of requests (tracing/); None, the default, costs the request path one test.
        self.tracing = tracing
        self.tasks: TaskRunner | None = None  # set by attach_tasks: this server makes tasks
        # The virtual server this Server answers as (endpoints.py), None for the catch-all /mcp,
        # and its key (Session.endpoint, the bus message's "endpoints").
        self.endpoint: EndpointSpec | None = None
        self.endpoint_key: str = CATCH_ALL
        # Tool search (methods/tool_search.py): the catch-all's from settings, a virtual server's
        # from its spec (endpoint_servers.py). ``on_search(server label)`` counts each search.
        self.tool_search = tool_search or ToolSearch()
        # How search_tools ranks (search.MODES: "default", "plain", "embedding"), every endpoint alike.
        self.search_ranking = search_ranking
        self.on_search: Callable[[str], None] | None = None
        # SEP-2564's filter on tools/list (draft: off unless the deployment turns it on).
        self.list_filter = list_filter
        # Approval before risky calls (approvals.py): the staff queue and its timeout.
        self.approvals = approvals

    def attach_tasks(self, runner: TaskRunner) -> None:
        """Serve tasks (the extension io.modelcontextprotocol/tasks; 2025-11-25 tasks) with
        ``runner``, which runs tools as this server does."""
        runner.execute = functools.partial(execute_tool, self.provider, approvals=self.approvals)
        self.tasks = runner

    # -- capabilities ---------------------------------------------------------------------------
    def capabilities(self, version: str, snapshot: Snapshot | None = None) -> dict[str, Any]:
        """What this server declares; ``snapshot``: what it serves (its endpoint's selection),
        whose content narrows the provider's capabilities (``features.py``)."""
        caps = narrowed(self.provider.capabilities, snapshot)
        wire = self._capabilities(version, caps)
        if self.tasks is not None and caps.tools:
            if versions.is_modern(version):
                wire["extensions"] = {**wire.get("extensions", {}), EXTENSION: {}}
            elif version == versions.V2025_11_25:
                wire["tasks"] = dict(LEGACY_CAPABILITY)
        if caps.skills and caps.resources:
            # SEP-2640 "Capability Declaration", settings inline under the identifier (SEP-2133),
            # in both eras: the methods are served in both.
            wire["extensions"] = {**wire.get("extensions", {}), SKILLS_EXTENSION: {"directoryRead": True}}
        if self.list_filter and isinstance(wire.get("tools"), dict):
            # SEP-2564 "Capability Negotiation": the filter fields tools/list takes.
            wire["tools"] = {**wire["tools"], "filtering": list_filter_capability()}
        return wire

    def _capabilities(self, version: str, caps: ProviderCapabilities) -> dict[str, Any]:
        return versions.capabilities_to_wire(
            version=version,
            tools=caps.tools,
            resources=caps.resources,
            resources_subscribe=caps.resources_subscribe,
            prompts=caps.prompts,
            completions=caps.completions,
            logging=caps.logging,
            list_changed=caps.list_changed,
        )

    def server_info(self, version: str) -> dict[str, Any]:
        return versions.implementation_to_wire(
            self.name, self.version, self.title, version, self.description,
            icons=self.icons, website_url=self.website_url,
        )

    # -- legacy era -----------------------------------------------------------------------------
    async def handle(
        self, message: Request | Notification, session: Session, outbound: Outbound
    ) -> dict[str, Any] | None:
        if isinstance(message, Notification):
            self._notification(message, session.id)
            return None
        method = message.method
        try:
            if method == "initialize":
                if session.state != "new":
                    raise InvalidRequest("Invalid Request: initialize was already received for this session")
            elif session.state != "ready" and method != "ping":
                # [L] basic/lifecycle.mdx: initialize MUST be the first interaction.
                raise InvalidRequest("Invalid Request: the session is not initialized")
            entry = LEGACY_METHODS.get(method)
            if entry is None or not gate_open(self.provider.capabilities, entry[1]):
                raise MethodNotFound(f"Method not found: {method}")
        except MCPError as exc:
            return jsonrpc.error_response(message.id, exc)
        version = session.protocol_version or versions.LATEST_LEGACY
        run = self._run(
            message, session, outbound, entry[0], version, session.id, cancellable=method != "initialize"
        )
        return await (run if self.tracing is None else self.tracing.serve(message, session, version, run))

    def _notification(self, message: Notification, scope: str) -> None:
        if message.method == "notifications/cancelled":
            request_id = (message.params or {}).get("requestId")
            if isinstance(request_id, str | int) and not isinstance(request_id, bool):
                self.cancel(scope, request_id)
        # notifications/initialized and unknown notifications need no action (JSON-RPC: no reply).

    # -- modern era -----------------------------------------------------------------------------
    def is_modern_request(self, message: Any) -> bool:
        """A message whose body names a protocol version in ``_meta`` is modern, whatever its
        method: 2026-07-28 basic/versioning.mdx "a request with ``_meta`` is served statelessly".
        An ``initialize`` carrying it is therefore a modern request for a method this era removed
        (404 + -32601 over HTTP), while a plain ``initialize`` starts a legacy session."""
        if not isinstance(message, Request | Notification):
            return False
        meta = (message.params or {}).get("_meta")
        return isinstance(meta, dict) and META_PROTOCOL_VERSION in meta

    async def handle_stateless(
        self,
        message: Request | Notification,
        outbound: Outbound,
        principal: str | None = None,
        *,
        connection: str | None = None,
    ) -> dict[str, Any] | None:
        """Serve one 2026-07-28 message.

        ``connection`` names the channel the message arrived on when the transport has one that
        outlives a request (stdio). Requests are then tracked under it, so a
        ``notifications/cancelled`` on that channel reaches them (2026-07-28 stdio.mdx
        "Cancellation": the client MUST cancel that way) and an id still in flight on it is
        refused. It carries no state between requests. Over HTTP it is ``None``: each POST is
        its own channel and the client cancels by closing the stream.
        """
        if isinstance(message, Notification):
            if connection is not None:
                self._notification(message, connection)
            return None
        try:
            session = stateless_session(message.params, principal)
            session.endpoint = self.endpoint_key  # the server it was served as (audit, logs)
            entry = MODERN_METHODS.get(message.method)
            if entry is None or not gate_open(self.provider.capabilities, entry[1]):
                raise MethodNotFound(f"Method not found: {message.method}")
        except MCPError as exc:
            return jsonrpc.error_response(message.id, exc)
        assert session.protocol_version is not None
        scope = connection if connection is not None else session.id
        try:
            mrtr = start_round(message.method, message.params or {}, session.principal, self.request_state)
        except MCPError as exc:
            return jsonrpc.error_response(message.id, exc)
        version = session.protocol_version
        run = self._run(message, session, outbound, entry[0], version, scope, cancellable=True, mrtr=mrtr)
        response = await (run if self.tracing is None else self.tracing.serve(message, session, version, run))
        if response is not None and "result" in response:
            info = self._modern_server_info
            decorate_result(message.method, response["result"], self.cache_ttl_ms, self.cache_scope, info)
        return response

    @functools.cached_property
    def _modern_server_info(self) -> dict[str, Any]:
        return self.server_info(versions.LATEST)

    # -- running one request --------------------------------------------------------------------
    async def _run(
        self,
        message: Request,
        session: Session,
        outbound: Outbound,
        handler: Handler,
        version: str,
        scope: str,
        *,
        cancellable: bool,
        mrtr: InputRound | None = None,
    ) -> dict[str, Any] | None:
        key = (scope, message.id)
        if key in self.inflight:
            # basic/index.mdx "Requests": an id MUST NOT be reused within a session ([26]: while
            # the sender awaits its response). Refuse the second; the first runs on untouched.
            return jsonrpc.error_response(
                message.id,
                InvalidRequest(
                    f"Invalid Request: request id {message.id!r} is already in use by a request "
                    "still in progress; request ids must not be reused"
                ),
            )
        params = message.params or {}
        try:
            check_params(message.method, params, version)
        except MCPError as exc:
            return jsonrpc.error_response(message.id, exc)
        meta = params.get("_meta")
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        if not isinstance(token, str | int) or isinstance(token, bool):
            token = None
        ctx = Context(
            session=session,
            outbound=outbound,
            request_id=message.id,
            progress_token=token,
            client_request_timeout=self.client_request_timeout,
            inputs=mrtr,
            meta=meta if isinstance(meta, dict) else None,
        )
        refreshing = self.provider.refreshing
        if refreshing is not None and not refreshing.done():
            # A change was received and its list_changed may already be on its way (fanout/listener.py
            # writes before the rebuild ends): the client re-listing must see the change.
            # Shielded: a request that goes away does not cancel the worker's rebuild.
            await asyncio.shield(refreshing)
        # Who calls: read here once (the transport bound it), then carried by the call.
        call = Call(server=self, session=session, ctx=ctx, params=params, version=version,
                    principal=current_principal())
        if message.method == "tools/call" and self.tool_search.mode != "off":
            # call_tool(name, arguments) becomes a call of the named tool before the guard sees
            # it, so its rate limits, audit, tasks and progress are a direct call's.
            tool_search.unwrap(call)
        if self.tracing is not None:
            handler = traced(handler, message.method)
        run = handler(call) if self.interceptor is None else self.interceptor(message.method, call, handler)
        # The handler runs in this task; cancel/stop_all/an MRTR question cancel it and
        # ``take_back`` withdraws what was ours (inflight.py).
        task = asyncio.current_task()
        assert task is not None, "Server requests run inside an asyncio task"
        entry = self.inflight.enter(key, task, ctx, cancellable)
        if mrtr is not None:
            mrtr.task = task
        try:
            result = await run
        except asyncio.CancelledError:
            if take_back(task, entry, mrtr):
                if entry.stopped:
                    return jsonrpc.error_response(message.id, WorkerStopped())
                if entry.cancelled_by_client:
                    return None
                if mrtr is not None and mrtr.parked:
                    return jsonrpc.result_response(message.id, questions(mrtr, self.request_state))
            raise
        except RequestCancelled:
            take_back(task, entry, mrtr)
            return None
        except MCPError as exc:
            take_back(task, entry, mrtr)
            return jsonrpc.error_response(message.id, self._wire_error(exc, version))
        except StoreUnavailable:
            # A handler's store is down (the task store: Redis): the transport's 503, as for the
            # session store, not an internal error the client could not tell from a bug.
            take_back(task, entry, mrtr)
            raise
        except Exception:
            take_back(task, entry, mrtr)
            logger.exception("Internal error while serving %s", message.method)
            return jsonrpc.error_response(message.id, InternalError())
        finally:
            # progress.mdx: notifications MUST stop after completion, even from a task the
            # handler leaked.
            ctx.finish()
            self.inflight.leave(key, entry)
        # A handler that swallowed a cancellation of ours still leaves the task as it found it.
        take_back(task, entry, mrtr)
        if entry.cancelled_by_client:
            return None  # cancelled after the handler finished but before we answered: no response
        return jsonrpc.result_response(message.id, result)

    def _wire_error(self, exc: MCPError, version: str) -> MCPError:
        if isinstance(exc, ResourceNotFound) and exc.code != versions.resource_not_found_code(version):
            return MCPError(exc.message, exc.data, code=versions.resource_not_found_code(version))
        return exc

    def cancel(self, session_id: str, request_id: jsonrpc.RequestId) -> bool:
        """Stop an in-flight request (notifications/cancelled); ``False`` if unknown or finished."""
        return self.inflight.cancel((session_id, request_id))

    def cancel_session(self, session_id: str) -> int:
        """Stop every request of a session that ended (DELETE): nobody will read their answers."""
        return self.inflight.cancel_scope(session_id)

    def in_flight(self) -> int:
        return len(self.inflight)

    def running(self) -> list[asyncio.Task[Any]]:
        """The tasks of the requests in flight (a stopping worker waits for them)."""
        return self.inflight.running()

    def stop_all(self) -> int:
        """The worker is stopping and its grace period is over: every request still running ends
        now, answered with ``WorkerStopped`` (the client may retry it elsewhere)."""
        return self.inflight.stop_all()


def traced(handler: Handler, method: str) -> Handler:
    """``handler`` inside a child span of the request's (tracing on only): the method's own work,
    apart from the limits and audit around it."""

    async def run(call: Call) -> dict[str, Any]:
        with tracing.child(f"handle {method}"):
            return await handler(call)

    return run
