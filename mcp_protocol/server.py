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
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from . import jsonrpc, versions
from .changefeed import ChangeFeed
from .context import DEFAULT_CLIENT_REQUEST_TIMEOUT, Context
from .errors import (
    InternalError,
    InvalidRequest,
    MCPError,
    MethodNotFound,
    RequestCancelled,
    ResourceNotFound,
    WorkerStopped,
)
from .inputs import InputRound, questions, start_round
from .jsonrpc import Notification, Request
from .methods import completion, lifecycle, logs, prompts, resources, subscriptions, tools
from .methods.base import Call, Handler, Interceptor
from .methods.listing import WireCache
from .methods.modern import (
    META_PROTOCOL_VERSION,
    decorate_result,
    stateless_session,
)
from .outbound import Outbound
from .pagination import Paginator
from .provider import Provider, ProviderCapabilities
from .request_state import RequestStateSealer
from .session import Session
from .shapes import check_params

logger = logging.getLogger(__name__)

Gate = tuple[str, ...]  # the ProviderCapabilities flags a method needs, all of them
_OPEN: Gate = ()


def _gate_open(caps: ProviderCapabilities, gate: Gate) -> bool:
    return all(getattr(caps, flag) for flag in gate)


_SHARED: dict[str, tuple[Handler, Gate]] = {
    "tools/list": (tools.list_tools, ("tools",)),
    "tools/call": (tools.call_tool, ("tools",)),
    "resources/list": (resources.list_resources, ("resources",)),
    "resources/read": (resources.read_resource, ("resources",)),
    "resources/templates/list": (resources.list_resource_templates, ("resources",)),
    "prompts/list": (prompts.list_prompts, ("prompts",)),
    "prompts/get": (prompts.get_prompt, ("prompts",)),
    "completion/complete": (completion.complete, ("completions",)),
}
# server/resources.mdx: `subscribe` is a feature *of* the resources capability, so a server
# without resources has no subscriptions even if the provider left the sub-flag on.
_SUBSCRIBE: Gate = ("resources", "resources_subscribe")
LEGACY_METHODS: dict[str, tuple[Handler, Gate]] = {
    **_SHARED,
    "initialize": (lifecycle.initialize, _OPEN),
    "ping": (lifecycle.ping, _OPEN),
    "resources/subscribe": (resources.subscribe, _SUBSCRIBE),
    "resources/unsubscribe": (resources.unsubscribe, _SUBSCRIBE),
    "logging/setLevel": (logs.set_level, ("logging",)),
}
# 2026-07-28 changelog: no initialize, ping, logging/setLevel or resources/(un)subscribe.
MODERN_METHODS: dict[str, tuple[Handler, Gate]] = {
    **_SHARED,
    "server/discover": (lifecycle.discover, _OPEN),
    "subscriptions/listen": (subscriptions.listen, _OPEN),
}


@dataclass(slots=True)
class _InFlight:
    task: asyncio.Task[Any]  # the task the handler runs in (the transport's)
    ctx: Context
    cancellable: bool = True
    base: int = 0  # the task's pending cancellations when the handler started
    cancelled_by_client: bool = False
    stopped: bool = False  # the worker is stopping and gave up on it (``stop_all``)
    taken_back: bool = False


def _take_back(task: asyncio.Task[Any], entry: _InFlight, mrtr: InputRound | None) -> bool:
    """Withdraw the cancellations this module asked of ``task`` for ``entry`` (each asks at most
    once: ``cancel``/``stop_all`` one between them, an MRTR question one); True when no other
    cancellation is pending, i.e. the one being raised was ours."""
    if entry.taken_back:
        return False
    entry.taken_back = True
    ours = int(entry.cancelled_by_client or entry.stopped) + int(mrtr is not None and mrtr.parked)
    for _ in range(ours):
        task.uncancel()
    return ours > 0 and task.cancelling() <= entry.base


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
    ) -> None:
        self.provider = provider
        self.name = name
        self.version = version
        self.title = title
        self.instructions = instructions
        self.paginator = Paginator(cursor_secret, page_size)
        # Without keys of its own, requestState is keyed from the cursor secret (domain-separated).
        keys = list(request_state_keys) or [hashlib.sha256(b"mcp-request-state:" + cursor_secret).digest()]
        self.request_state = RequestStateSealer(keys, request_state_ttl)
        self.client_request_timeout = client_request_timeout
        # Lists can change at any moment (admin edits) and may vary by principal: by default
        # clients may not reuse them, nor may shared caches.
        self.cache_ttl_ms = cache_ttl_ms
        self.cache_scope = cache_scope
        self.wire_cache = WireCache()
        # Committed changes, as this process learns them, for subscriptions/listen streams.
        self.feed = ChangeFeed()
        self._inflight: dict[tuple[str, jsonrpc.RequestId], _InFlight] = {}
        # Runs each request instead of its handler when set: rate limits and audit (auth/guard.py).
        self.interceptor: Interceptor | None = None

    # -- capabilities ---------------------------------------------------------------------------
    def capabilities(self, version: str) -> dict[str, Any]:
        caps = self.provider.capabilities
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
        return versions.implementation_to_wire(self.name, self.version, self.title, version)

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
            if entry is None or not _gate_open(self.provider.capabilities, entry[1]):
                raise MethodNotFound(f"Method not found: {method}")
        except MCPError as exc:
            return jsonrpc.error_response(message.id, exc)
        version = session.protocol_version or versions.LATEST_LEGACY
        return await self._run(
            message, session, outbound, entry[0], version, session.id, cancellable=method != "initialize"
        )

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
            entry = MODERN_METHODS.get(message.method)
            if entry is None or not _gate_open(self.provider.capabilities, entry[1]):
                raise MethodNotFound(f"Method not found: {message.method}")
        except MCPError as exc:
            return jsonrpc.error_response(message.id, exc)
        assert session.protocol_version is not None
        scope = connection if connection is not None else session.id
        try:
            mrtr = start_round(message.method, message.params or {}, session.principal, self.request_state)
        except MCPError as exc:
            return jsonrpc.error_response(message.id, exc)
        response = await self._run(
            message, session, outbound, entry[0], session.protocol_version, scope, cancellable=True,
            mrtr=mrtr,
        )
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
        if key in self._inflight:
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
        )
        refreshing = self.provider.refreshing
        if refreshing is not None and not refreshing.done():
            # A change was received and its list_changed may already be on its way (fanout.py
            # writes before the rebuild ends): the client re-listing must see the change.
            # Shielded: a request that goes away does not cancel the worker's rebuild.
            await asyncio.shield(refreshing)
        call = Call(server=self, session=session, ctx=ctx, params=params, version=version)
        run = handler(call) if self.interceptor is None else self.interceptor(message.method, call, handler)
        # The handler runs in the caller's task, not a task of its own (one loop turn and a Task
        # less per request: bench/README.md "The request hot path"). To stop it, ``cancel``,
        # ``stop_all`` and an MRTR question cancel that task and this frame takes the
        # cancellation back (``uncancel``, as ``asyncio.timeout`` does), so the caller carries on
        # and answers. A cancellation from outside (the client left, the worker is torn down)
        # is not ours and propagates.
        task = asyncio.current_task()
        assert task is not None, "Server requests run inside an asyncio task"
        entry = _InFlight(task, ctx, cancellable, base=task.cancelling())
        # Tracked even when not cancellable, so the id counts as in use until answered.
        self._inflight[key] = entry
        if mrtr is not None:
            mrtr.task = task
        try:
            result = await run
        except asyncio.CancelledError:
            if _take_back(task, entry, mrtr):
                if entry.stopped:
                    return jsonrpc.error_response(message.id, WorkerStopped())
                if entry.cancelled_by_client:
                    return None
                if mrtr is not None and mrtr.parked:
                    return jsonrpc.result_response(message.id, questions(mrtr, self.request_state))
            raise
        except RequestCancelled:
            _take_back(task, entry, mrtr)
            return None
        except MCPError as exc:
            _take_back(task, entry, mrtr)
            return jsonrpc.error_response(message.id, self._wire_error(exc, version))
        except Exception:
            _take_back(task, entry, mrtr)
            logger.exception("Internal error while serving %s", message.method)
            return jsonrpc.error_response(message.id, InternalError())
        finally:
            # progress.mdx: notifications MUST stop after completion, even from a task the
            # handler leaked.
            ctx.finish()
            if self._inflight.get(key) is entry:
                del self._inflight[key]
        # A handler that swallowed a cancellation of ours still leaves the task as it found it.
        _take_back(task, entry, mrtr)
        if entry.cancelled_by_client:
            return None  # cancelled after the handler finished but before we answered: no response
        return jsonrpc.result_response(message.id, result)

    def _wire_error(self, exc: MCPError, version: str) -> MCPError:
        if isinstance(exc, ResourceNotFound) and exc.code != versions.resource_not_found_code(version):
            return MCPError(exc.message, exc.data, code=versions.resource_not_found_code(version))
        return exc

    def cancel(self, session_id: str, request_id: jsonrpc.RequestId) -> bool:
        """Stop an in-flight request (notifications/cancelled); ``False`` if unknown or finished."""
        entry = self._inflight.get((session_id, request_id))
        if entry is None or entry.task.done() or not entry.cancellable or entry.cancelled_by_client:
            return False
        if entry.stopped:
            entry.cancelled_by_client = True  # already being stopped: one cancellation is enough
            return True
        entry.cancelled_by_client = True
        entry.ctx.cancel_event.set()
        entry.task.cancel()
        return True

    def cancel_session(self, session_id: str) -> int:
        """Stop every request of a session that ended (DELETE): nobody will read their answers."""
        return sum(self.cancel(sid, rid) for sid, rid in list(self._inflight) if sid == session_id)

    def in_flight(self) -> int:
        return len(self._inflight)

    def running(self) -> list[asyncio.Task[Any]]:
        """The tasks of the requests in flight (a stopping worker waits for them)."""
        return [entry.task for entry in self._inflight.values() if not entry.task.done()]

    def stop_all(self) -> int:
        """The worker is stopping and its grace period is over: every request still running ends
        now, answered with ``WorkerStopped`` (the client may retry it elsewhere)."""
        stopped = 0
        for entry in list(self._inflight.values()):
            if not entry.task.done() and entry.cancellable and not entry.cancelled_by_client \
                    and not entry.stopped:
                entry.stopped = True
                entry.ctx.cancel_event.set()
                entry.task.cancel()
                stopped += 1
        return stopped
