"""Requests to an upstream over its pooled session: the breaker, the cap, the deadline, the span,
and what a failure means (issue 40 item 4).

``run`` is the one way a call reaches an upstream. It returns the upstream's result as wire JSON
or raises ``UpstreamFailure`` naming the upstream and what went wrong; the tool kind turns that into
an ``isError`` result, resources/read, prompts/get and completion/complete into a JSON-RPC error.

- The breaker of the upstream (``breaker.py``) is asked first: open → fail at once.
- ``config.timeout`` bounds the whole call: waiting for a slot among ``max_concurrency``, opening the
  session if there is none, the request. Our timeout cancels the SDK's request task, and the SDK
  then sends ``notifications/cancelled`` for it (basic/utilities/cancellation.mdx: SHOULD), as it
  does when our client's ``notifications/cancelled`` cancels the tool call that made it.
- Failures that say the upstream is unreachable (connection refused or dropped, our timeout) count
  against the breaker and drop the session; an answer, even a JSON-RPC error, is the upstream alive.
- A 404 for the session (``_expired``) is retried once on a new session: the upstream refused the
  request without processing it (basic/transports.mdx, Session Management: the client MUST start
  a new session).
- With tracing on, each call is a CLIENT span naming the method, the upstream and the original
  name (never the arguments, nor the URL: its query may carry a secret).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

import pydantic
from mcp import ClientSession
from mcp.shared.exceptions import MCPError as SDKError
from mcp.types import CONNECTION_CLOSED, INVALID_REQUEST, REQUEST_TIMEOUT

from mcp_protocol import tracing

from .breaker import CircuitOpen
from .pool import Pooled, UpstreamSessions

MAX_RESULT_BYTES = 4 * 1024 * 1024  # a hostile upstream's answer is not ours to relay unbounded
MAX_MESSAGE_CHARS = 1000  # of an upstream's error message, in ours


class UpstreamFailure(Exception):
    """An upstream call that did not produce a result; ``message`` names the upstream."""

    def __init__(self, message: str, code: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code  # the upstream's JSON-RPC error code, when it answered with one


class _Unreachable(Exception):
    pass


Operation = Callable[[ClientSession], Awaitable[Any]]


async def run(sessions: UpstreamSessions, config: Any, method: str, name: str, operation: Operation) -> Any:
    upstream = config.name
    async with sessions.lend(config) as entry:
        try:
            entry.breaker.check()
        except CircuitOpen as exc:
            raise UpstreamFailure(str(exc)) from None
        attributes = {"mcp.method.name": method, "mcp.upstream.name": upstream, "gen_ai.tool.name": name}
        with tracing.child(f"{method} {name}", attributes, client=True) as span:
            started = time.perf_counter()
            phase = _Phase()
            try:
                async with asyncio.timeout(float(config.timeout)):
                    return await _attempt(entry, operation, phase)
            except TimeoutError:
                if phase.waiting_for_slot:  # our cap, not the upstream: nothing against its breaker
                    entry.breaker.abandoned()
                    raise UpstreamFailure(
                        f"upstream {upstream}: {config.max_concurrency} calls already in flight on this "
                        f"worker, none ended within {config.timeout:g} s") from None
                entry.breaker.failed("timeout")
                entry.discard()  # a session whose requests hang may be a dead connection
                if span is not None:
                    span.set_attribute("error.type", "timeout")
                raise UpstreamFailure(
                    f"upstream {upstream} did not answer within {config.timeout:g} s") from None
            except _Unreachable as exc:
                if span is not None:
                    span.set_attribute("error.type", "unreachable")
                raise UpstreamFailure(f"upstream {upstream} is unreachable: {exc}") from None
            except UpstreamFailure as exc:
                if span is not None:
                    span.set_attribute("error.type", str(exc.code or "error"))
                raise
            finally:
                if span is not None:
                    span.set_attribute("mcp.upstream.duration_ms", (time.perf_counter() - started) * 1000)


class _Phase:
    waiting_for_slot = True


async def _attempt(entry: Pooled, operation: Operation, phase: _Phase) -> Any:
    upstream = entry.config.name
    await entry.slots.acquire()  # under the caller's deadline: a full cap waits, then times out
    phase.waiting_for_slot = False
    try:
        for retry in (False, True):
            try:
                session = await entry.session()
            except Exception as exc:  # refused, TLS, HTTP error, the connect timeout: not reached
                entry.breaker.failed(f"connect: {exc!r}")
                raise _Unreachable(_describe(exc)) from None
            try:
                result = await operation(session)
            except SDKError as exc:
                expired = _expired(exc)
                if expired and not retry:
                    entry.discard(session)  # a new session, the request once more
                    continue
                if expired or exc.code in (CONNECTION_CLOSED, REQUEST_TIMEOUT):  # 404 again, dropped, hung
                    entry.discard(session)
                    entry.breaker.failed(exc.error.message)
                    raise _Unreachable(exc.error.message[:MAX_MESSAGE_CHARS]) from None
                entry.breaker.succeeded()  # it answered: alive, the error is the request's
                said = f"upstream {upstream} answered with an error: {exc.error.message[:MAX_MESSAGE_CHARS]}"
                raise UpstreamFailure(said, exc.code) from None
            except pydantic.ValidationError:
                entry.breaker.succeeded()
                raise UpstreamFailure(f"upstream {upstream} answered with an invalid result") from None
            except (OSError, ConnectionError) as exc:
                entry.discard(session)
                entry.breaker.failed(repr(exc))
                raise _Unreachable(_describe(exc)) from None
            except asyncio.CancelledError:
                entry.breaker.abandoned()
                raise
            entry.breaker.succeeded()
            return result
        raise AssertionError("unreachable: the second attempt returns or raises")
    finally:
        entry.slots.release()


def _expired(exc: SDKError) -> bool:
    """The upstream's 404 for our session. The SDK hides the status: its own stand-in is "Session
    terminated", and a server that put a JSON-RPC error in the 404's body ("Session not found": the
    SDK's servers, ours) has it surfaced instead. Both are Invalid Request, so the request was not
    processed (JSON-RPC 2.0 §5.1) and sending it again on a new session is safe."""
    return exc.code == INVALID_REQUEST and "session" in exc.error.message.lower()


def _describe(exc: BaseException) -> str:
    """A short reason without the upstream's secrets (no headers, no URL with its query)."""
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(_describe(e) for e in exc.exceptions[:3])
    text = str(exc) or type(exc).__name__
    return text.split("?")[0][:300]
