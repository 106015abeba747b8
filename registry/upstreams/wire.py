"""The lean request path to an upstream over Streamable HTTP (issue 40 item 4): a call is one
JSON-RPC POST on a pooled ``aiohttp.ClientSession``, its answer read as it arrives.

The official SDK's client costs ~2 ms of CPU per request in its HTTP stack (httpx2, httpcore2, anyio
memory streams: bench/results/2026-11-28-1140-upstream-calls.md); the SDK still makes the session
(``connect.py``: transport fallback, ``initialize`` or ``server/discover``), and this module sends
the calls with what it negotiated, as basic/transports.mdx says a client does:

- 2025 era (a handshake session): ``Mcp-Session-Id`` and ``MCP-Protocol-Version`` on every POST
  ("Session Management", "Protocol Version Header"); a 404 means the session is gone
  (``Expired``: the caller makes a new one); the upstream's requests on the POST's stream are
  answered by POSTing our response (``Relay.asked``); our cancellation is a
  ``notifications/cancelled`` POST (basic/utilities/cancellation.mdx).
- 2026-07-28 (stateless): no session; each request carries its protocol version, our client's
  capabilities and info in ``params._meta`` and the ``MCP-Protocol-Version``, ``Mcp-Method``,
  ``Mcp-Name`` headers; the upstream's questions come as an ``input_required`` result answered by
  retrying with ``inputResponses`` and ``requestState`` (basic/patterns/mrtr.mdx); cancellation is
  closing the request's connection (the 2026 HTTP wire has no client notifications).

Either way the answer is a JSON body or an SSE stream (``stream.py``); progress and log
notifications on the stream go to the ``Relay``. Each answer is bounded (``limit`` bytes); the
connection goes where the outbound rules say (``guard.py``: the URL checked before each POST, the
addresses pinned by the session's resolver).

Not done here (the SDK's transport does them, the lean path does not): resuming a stream the
upstream closes before the answer (SEP-1699: ``Dropped``, the call fails), ``Mcp-Param-*``
headers from a tool's ``x-mcp-header`` schema annotations.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import aiohttp

from ..kinds.http_client import challenge
from . import stream
from .guard import check_url
from .relay import MAX_INPUT_ROUNDS, Relay

logger = logging.getLogger(__name__)

PROTOCOL_VERSION_META = "io.modelcontextprotocol/protocolVersion"
CLIENT_INFO_META = "io.modelcontextprotocol/clientInfo"
CLIENT_CAPABILITIES_META = "io.modelcontextprotocol/clientCapabilities"
LOG_LEVEL_META = "io.modelcontextprotocol/logLevel"
MODERN_VERSIONS = frozenset({"2026-07-28"})
MAX_RESULT_BYTES = 4 * 1024 * 1024  # a hostile upstream's answer is not ours to relay unbounded
CANCEL_POST_SECONDS = 5.0  # a notifications/cancelled POST that hangs is given up


class RpcError(Exception):
    """The upstream answered with a JSON-RPC error (or an HTTP 4xx saying the same)."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class Expired(Exception):
    """404 on our session: the upstream forgot it (not processed: a new session may retry)."""


class Unauthorized(Exception):
    """401: the credentials were refused (a rotated token: a new one may retry)."""


class Forbidden(Exception):
    """403: the credentials are valid but not allowed (RFC 6750 §3.1): a new token of the same
    grant would be refused too, so nobody retries; ``refusal`` has the service's reason and, for
    ``insufficient_scope``, the scope it asked for."""

    def __init__(self, refusal: challenge.Forbidden) -> None:
        super().__init__(refusal.reason)
        self.refusal = refusal


class Dropped(Exception):
    """No answer: the connection failed or closed, or the upstream answered 5xx."""


@dataclass
class Channel:
    """What a call needs to reach one upstream: where, how (the negotiated era), with what."""

    url: str
    http: aiohttp.ClientSession
    protocol_version: str
    session_id: str | None
    client_info: dict[str, Any]
    headers: dict[str, str]  # the credentials (auth.py), fetched when the session was made
    limit: int
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    _background: set[asyncio.Task[None]] = field(default_factory=set)
    # The SDK's table and encoding of the Mcp-Name header (2026-07-28 transports), taken once per
    # channel: this module is imported without the SDK, which comes with the first session
    # (handshake.py), and a channel exists only after its session's handshake.
    _names: Mapping[str, str] = field(init=False, repr=False)
    _encode_name: Callable[[str], str] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        from mcp.shared.inbound import NAME_BEARING_METHODS, encode_header_value

        self._names, self._encode_name = NAME_BEARING_METHODS, encode_header_value

    @property
    def modern(self) -> bool:
        return self.protocol_version in MODERN_VERSIONS

    def _headers(self, method: str | None, params: dict[str, Any] | None) -> dict[str, str]:
        headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json",
                   "MCP-Protocol-Version": self.protocol_version, **self.headers}
        if self.session_id is not None:
            headers["Mcp-Session-Id"] = self.session_id
        if self.modern and method is not None:
            headers["Mcp-Method"] = method
            key = self._names.get(method)
            if key is not None and params is not None and isinstance(params.get(key), str):
                headers["Mcp-Name"] = self._encode_name(params[key])
        return headers

    async def request(self, method: str, params: dict[str, Any], relay: Relay) -> dict[str, Any]:
        """The upstream's result (input-required rounds answered through ``relay``); raises
        ``RpcError``, ``Expired``, ``Unauthorized``, ``Forbidden``, ``Dropped``, ``stream.TooLarge``,
        ``stream.Malformed``."""
        meta: dict[str, Any] = {}
        if relay.progress_token is not None:
            # Unique among this session's requests (basic/utilities/progress.mdx: MUST be unique
            # across all active requests); the relay matches notifications against it.
            relay.progress_token = meta["progressToken"] = f"progress-{next(self._ids)}"
        if self.modern:
            meta[PROTOCOL_VERSION_META] = self.protocol_version
            meta[CLIENT_INFO_META] = self.client_info
            meta[CLIENT_CAPABILITIES_META] = relay.capabilities()
            level = relay.log_level()
            if level is not None:
                meta[LOG_LEVEL_META] = level
        sent = {**params, "_meta": meta} if meta else dict(params)
        for _ in range(MAX_INPUT_ROUNDS):
            result = await self._exchange(method, sent, relay)
            if not (self.modern and result.get("resultType") == "input_required"):
                return result
            sent = {**sent, "inputResponses": await relay.answers(result.get("inputRequests"))}
            if "requestState" in result:
                sent["requestState"] = result["requestState"]
            else:
                sent.pop("requestState", None)
        raise RpcError(-32603, f"asked for input more than {MAX_INPUT_ROUNDS} times in one call")

    async def _exchange(self, method: str, params: dict[str, Any], relay: Relay) -> dict[str, Any]:
        request_id = next(self._ids)
        body = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params},
                          separators=(",", ":")).encode()
        check_url(self.url)  # the rules as they are now (UpstreamRefused: nothing sent)
        headers = self._headers(method, params)
        try:
            try:
                response = await self.http.post(self.url, data=body, headers=headers, allow_redirects=False)
            except aiohttp.ServerDisconnectedError:
                # A kept-alive connection the upstream had closed (idle, or it restarted): the
                # request was not read. Once more, on a new connection (as httpcore does).
                response = await self.http.post(self.url, data=body, headers=headers, allow_redirects=False)
        except (aiohttp.ClientError, OSError) as exc:
            raise Dropped(_reason(exc)) from None
        try:
            await self._refused(response)
            async with contextlib.aclosing(stream.messages(response, self.limit)) as messages:
                async for message in messages:
                    if "method" in message:
                        if "id" in message:  # a server→client request, related to this call
                            reply = await relay.asked(message["method"], message.get("params"))
                            await self._post({"jsonrpc": "2.0", "id": message["id"], **reply})
                        else:
                            await relay.notified(message["method"], message.get("params"))
                    elif message.get("id") == request_id:
                        return _result(message)
            raise Dropped("the upstream ended its answer without a response")
        except asyncio.CancelledError:
            response.close()  # 2026-07-28: closing the request's connection is the cancellation
            if not self.modern:
                self._cancel(request_id)
            raise
        except (aiohttp.ClientError, OSError) as exc:
            raise Dropped(_reason(exc)) from None
        finally:
            response.release()

    async def _refused(self, response: aiohttp.ClientResponse) -> None:
        """Raise for an answer that is not 200 (a JSON-RPC error in a 4xx body is the upstream's)."""
        status = response.status
        if status == 200:
            return
        if status == 404 and self.session_id is not None:
            # basic/transports.mdx, Session Management: the client MUST start a new session.
            raise Expired("the upstream no longer knows our session (HTTP 404)")
        if status == 401:
            raise Unauthorized("the upstream refused our credentials (HTTP 401)")
        if status == 403:
            headers = response.headers
            raise Forbidden(challenge.forbidden(headers.get("WWW-Authenticate", ""), await _head(response),
                                                headers.get("Content-Type", "")))
        if status >= 500:
            raise Dropped(f"the upstream answered HTTP {status}")
        if status == 202:
            raise RpcError(-32600, "the upstream answered a request with 202 Accepted")
        if 300 <= status < 400:
            raise RpcError(-32600, f"the upstream redirected (HTTP {status}); redirects are not followed")
        with contextlib.suppress(stream.TooLarge, stream.Malformed, aiohttp.ClientError):
            async with contextlib.aclosing(stream.messages(response, 64 * 1024)) as messages:
                async for message in messages:
                    _result(message)  # raises the upstream's RpcError
        raise RpcError(-32600, f"the upstream answered HTTP {status}")

    def _cancel(self, request_id: int) -> None:
        """``notifications/cancelled`` for our request, in the background: our caller is gone."""
        message = {"jsonrpc": "2.0", "method": "notifications/cancelled",
                   "params": {"requestId": request_id, "reason": "the caller cancelled"}}
        task = asyncio.get_running_loop().create_task(self._post(message))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _post(self, message: dict[str, Any]) -> None:
        body = json.dumps(message, separators=(",", ":")).encode()
        try:
            async with asyncio.timeout(CANCEL_POST_SECONDS):
                async with self.http.post(self.url, data=body, headers=self._headers(None, None),
                                          allow_redirects=False) as response:
                    if response.status >= 300:
                        logger.info("upstream at %s answered our %s with HTTP %s", _origin(self.url),
                                    message.get("method", "reply"), response.status)
        except (aiohttp.ClientError, OSError, TimeoutError) as exc:
            logger.info("upstream at %s: our %s was not delivered: %s", _origin(self.url),
                        message.get("method", "reply"), _reason(exc))


def _result(message: dict[str, Any]) -> dict[str, Any]:
    if isinstance(message.get("result"), dict):
        return dict(message["result"])
    error = message.get("error")
    if isinstance(error, dict):
        code = error.get("code")
        raise RpcError(code if isinstance(code, int) else -32603, str(error.get("message", ""))[:1000])
    raise stream.Malformed("a response with neither a result object nor an error")


async def _head(response: aiohttp.ClientResponse, limit: int = 16 * 1024) -> str:
    """The start of an error answer's body (its reason), never more than ``limit`` bytes read."""
    received = bytearray()
    with contextlib.suppress(aiohttp.ClientError, OSError):
        async for chunk in response.content.iter_any():
            received += chunk
            if len(received) >= limit:
                break
    return bytes(received[:limit]).decode("utf-8", errors="replace")


def _reason(exc: BaseException) -> str:
    """A short reason without secrets (no headers; no URL, whose query may hold one)."""
    text = str(exc) or type(exc).__name__
    return text.split("?")[0][:300]


def _origin(url: str) -> str:
    return url.split("?")[0]
