"""``connect(config)``: an initialized client session of the official ``mcp`` SDK with one upstream.

The SDK's client speaks every protocol revision it knows (``mode="auto"``: ``server/discover``,
falling back to the ``initialize`` handshake) over Streamable HTTP and the legacy HTTP+SSE
transport: a client of our own would have to follow each revision again. Its httpx2 client is
ours: ``GuardedTransport`` applies the outbound rules to every request, ``auth.headers`` adds the
credentials, the timeouts are the row's.

Transport ``auto`` follows the spec's backwards-compatibility rule (MCP 2025-03-26 and later,
Basic > Transports > Backwards Compatibility, "Clients wanting to support older servers"): POST
the handshake to the URL; "if it fails with an HTTP 4xx status code (e.g., 405 Method Not Allowed
or 404 Not Found)", GET the URL expecting an SSE stream whose first event is ``endpoint`` (the
2024-11-05 HTTP+SSE transport). The SDK folds a POST's status into a JSON-RPC error, so the
statuses are recorded by an httpx2 response hook: the fallback happens only when the handshake
failed AND a POST was answered 4xx; a refused connection or a 5xx is the upstream being down, not
old.

    async with connect(config) as session:
        tools = await session.list_tools()

For the calls' lean path (``wire.py``), ``connect(config, handshake)`` also fills ``handshake``
with what the SDK does not expose: the ``Mcp-Session-Id`` the upstream gave (read by the same
response hook), the credentials sent, the transport taken. Every session declares the
``sampling``, ``elicitation`` and ``roots`` capabilities: within a call the upstream's requests
are relayed to our client when it has them (``relay.py``), so a sync must list the tools an
upstream offers only to clients that have them (server-everything's, for one), as calls will
see them; outside a call the SDK's callbacks refuse them (a JSON-RPC error).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import httpx2
from mcp.client.client import Client
from mcp.client.session import ClientSession, MessageHandlerFnT
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import ErrorData, Implementation

from ..kinds.http_client import challenge
from ..kinds.http_client.challenge import Forbidden
from . import auth
from .config import UpstreamConfig, UpstreamTarget
from .errors import (
    UpstreamError,
    UpstreamForbidden,
    UpstreamRefused,
    UpstreamUnauthorized,
    UpstreamUnavailable,
)
from .guard import GuardedTransport, check_url
from .handshake import CLIENT_INFO_WIRE, Handshake

__all__ = [
    "Handshake",
    "UpstreamConfig",
    "UpstreamError",
    "UpstreamForbidden",
    "UpstreamRefused",
    "UpstreamTarget",
    "UpstreamUnauthorized",
    "UpstreamUnavailable",
    "connect",
]

CLIENT_INFO = Implementation(name=CLIENT_INFO_WIRE["name"], version=CLIENT_INFO_WIRE["version"])
METHOD_NOT_FOUND = -32601


async def _refuse(*args: Any) -> ErrorData:
    """The SDK's callback for an upstream request outside any call: nobody to relay it to."""
    return ErrorData(code=METHOD_NOT_FOUND, message="relayed to our client only within a call")

# A caller's look at every HTTP response of the connection (the listen stream: a GET answered 405).
Observer = Callable[[httpx2.Response], Awaitable[None]]


class _Statuses:
    """The HTTP statuses the POSTs of one attempt were answered with (an httpx2 response hook)."""

    def __init__(self, observer: Observer | None = None) -> None:
        self.posts: list[int] = []
        self.observer = observer
        self.session_id: str | None = None
        self.refusal: Forbidden | None = None  # the first 403's reason (RFC 6750 §3.1)

    async def __call__(self, response: httpx2.Response) -> None:
        if response.request.method == "POST":
            self.posts.append(response.status_code)
            self.session_id = response.headers.get("mcp-session-id") or self.session_id
            if response.status_code == 403 and self.refusal is None:
                headers = response.headers
                self.refusal = challenge.forbidden(headers.get("www-authenticate", ""), await _head(response),
                                                   headers.get("content-type", ""))
        if self.observer is not None:
            await self.observer(response)

    def old_server(self) -> bool:
        return any(400 <= s < 500 and s not in (401, 403) for s in self.posts)

    def unauthorized(self) -> bool:
        return any(s in (401, 403) for s in self.posts)


async def _head(response: httpx2.Response, limit: int = 16 * 1024) -> str:
    """The start of a refusal's body (its reason): read only when announced small, since the
    transport reads the body after this hook (a cached body is what it reads then)."""
    length = response.headers.get("content-length", "")
    if not (length.isdigit() and int(length) <= limit):
        return ""
    with contextlib.suppress(httpx2.HTTPError):
        await response.aread()
        return response.text[:limit]
    return ""


def _timeout(config: UpstreamConfig) -> httpx2.Timeout:
    return httpx2.Timeout(config.timeout, connect=config.connect_timeout)


def _http_client(config: UpstreamConfig, headers: dict[str, str], statuses: _Statuses,
                 timeout: httpx2.Timeout | None = None) -> httpx2.AsyncClient:
    return httpx2.AsyncClient(transport=GuardedTransport(), headers=headers,
                              timeout=timeout or _timeout(config), event_hooks={"response": [statuses]},
                              follow_redirects=False)


async def _enter(stack: contextlib.AsyncExitStack, config: UpstreamConfig, headers: dict[str, str],
                 sse: bool, statuses: _Statuses, handler: MessageHandlerFnT | None,
                 calls: Any = None) -> ClientSession:
    callbacks: dict[str, Any] = {"sampling_callback": _refuse, "elicitation_callback": _refuse,
                                 "list_roots_callback": _refuse}
    if sse:
        if calls is not None:  # this session carries calls: what it hears goes to them
            callbacks = calls.callbacks()
        def factory(headers: dict[str, str] | None = None, timeout: httpx2.Timeout | None = None,
                    auth: httpx2.Auth | None = None) -> httpx2.AsyncClient:
            return _http_client(config, dict(headers or {}), statuses, timeout)

        transport = sse_client(config.url, headers=headers, timeout=config.connect_timeout,
                               sse_read_timeout=max(config.timeout, 60.0), httpx_client_factory=factory)
        # HTTP+SSE is the 2024-11-05 transport: only the initialize handshake goes over it.
        client = Client(transport, mode="legacy", cache=None, read_timeout_seconds=config.timeout,
                        client_info=CLIENT_INFO, message_handler=handler, **callbacks)
    else:
        http = await stack.enter_async_context(_http_client(config, headers, statuses))
        client = Client(streamable_http_client(config.url, http_client=http), mode="auto", cache=None,
                        read_timeout_seconds=config.timeout, client_info=CLIENT_INFO, message_handler=handler,
                        **callbacks)
    # A peer that accepts the connection and never answers is bounded by the session's read
    # timeout (no anyio deadline around it: the client's task group must exit in its own scope).
    await stack.enter_async_context(client)
    return client.session


def _why(config: UpstreamConfig, exc: BaseException, statuses: _Statuses) -> UpstreamError:
    if isinstance(exc, UpstreamError):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            found = _why(config, inner, statuses)
            if isinstance(found, UpstreamRefused | UpstreamUnauthorized):
                return found
        return _why(config, exc.exceptions[0], statuses) if exc.exceptions else UpstreamUnavailable(str(exc))
    if statuses.refusal is not None:
        said = statuses.refusal.explain(f"{config.name}: the upstream")
        return UpstreamForbidden(said, statuses.refusal)
    if statuses.unauthorized():
        return UpstreamUnauthorized(f"{config.name}: the upstream refused our credentials "
                                    f"(HTTP {next(s for s in statuses.posts if s in (401, 403))})")
    if isinstance(exc, TimeoutError):
        limit = config.connect_timeout + config.timeout
        return UpstreamUnavailable(f"{config.name}: no answer within {limit:g} s")
    if statuses.posts and statuses.posts[-1] >= 400:
        return UpstreamUnavailable(f"{config.name}: the upstream answered HTTP {statuses.posts[-1]} ({exc})")
    return UpstreamUnavailable(f"{config.name}: {type(exc).__name__}: {exc}")


async def _open(stack: contextlib.AsyncExitStack, config: UpstreamConfig, headers: dict[str, str],
                handler: MessageHandlerFnT | None, observer: Observer | None,
                handshake: Handshake | None) -> ClientSession:
    first = config.transport == "sse"
    calls = handshake.calls if handshake is not None else None
    statuses = _Statuses(observer)
    attempt = contextlib.AsyncExitStack()
    try:
        session = await _enter(attempt, config, headers, first, statuses, handler, calls)
    except Exception as exc:  # every failure becomes an UpstreamError below
        with contextlib.suppress(Exception):
            await attempt.aclose()
        if config.transport != "auto" or not statuses.old_server():
            raise _why(config, exc, statuses) from None
    else:
        stack.push_async_exit(attempt)
        if handshake is not None:
            handshake.session_id, handshake.headers, handshake.sse = statuses.session_id, headers, first
        return session
    # Streamable HTTP was answered 4xx: the legacy transport (see the module's docstring).
    statuses = _Statuses(observer)
    attempt = contextlib.AsyncExitStack()
    try:
        session = await _enter(attempt, config, headers, True, statuses, handler, calls)
    except Exception as exc:
        with contextlib.suppress(Exception):
            await attempt.aclose()
        raise _why(config, exc, statuses) from None
    stack.push_async_exit(attempt)
    if handshake is not None:
        handshake.session_id, handshake.headers, handshake.sse = None, headers, True
    return session


@contextlib.asynccontextmanager
async def connect(config: UpstreamConfig, handshake: Handshake | None = None, *,
                  message_handler: MessageHandlerFnT | None = None,
                  observer: Observer | None = None) -> AsyncIterator[ClientSession]:
    """An initialized session with the upstream, closed on exit. Raises ``UpstreamRefused`` (our
    rules said no: nothing sent), ``UpstreamUnauthorized``, ``UpstreamUnavailable``. With
    ``handshake``: a session for calls (see the module's docstring), ``handshake`` filled.

    ``message_handler`` gets the upstream's notifications (the listen stream's ``list_changed``);
    ``observer`` sees every HTTP response (the listen stream's GET answered 405)."""
    check_url(config.url)
    if handshake is not None and handshake.bearer is not None:
        headers = {"Authorization": f"Bearer {handshake.bearer}"}
    else:
        headers = await auth.headers(config)
    async with contextlib.AsyncExitStack() as stack:
        try:
            session = await _open(stack, config, headers, message_handler, observer, handshake)
        except UpstreamForbidden:
            raise  # a valid token, not allowed (RFC 6750 §3.1): a new one of the same grant is too
        except UpstreamUnauthorized:
            if handshake is None or handshake.bearer is None:  # ours, not a user's: fetch a new one
                auth.forget_token(config)  # revoked or rotated
            raise
        yield session
