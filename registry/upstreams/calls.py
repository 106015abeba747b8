"""Requests to an upstream over its pooled session: the breaker, the cap, the deadline, the span,
and what a failure means (issue 40 item 4).

``run`` is the one way a call reaches an upstream. It sends ``method`` with ``params`` on the
upstream's live session (``pool.Live``: the lean path ``wire.py``, or the SDK session over the
legacy HTTP+SSE transport), relaying what the upstream says meanwhile (``relay.py``), and returns
the upstream's result as wire JSON or raises ``UpstreamFailure`` naming the upstream and what went
wrong; the tool kind turns that into an ``isError`` result, resources/read, prompts/get and
completion/complete into a JSON-RPC error.

- The breaker of the upstream (``breaker.py``) is asked first: open → fail at once.
- ``config.timeout`` bounds the whole call: waiting for a slot among ``max_concurrency``, opening the
  session if there is none, the request. Our timeout, or our client's ``notifications/cancelled``
  (which cancels the tool call's task), cancels the request: ``wire.py`` then tells the upstream
  (basic/utilities/cancellation.mdx: SHOULD; in 2026-07-28 by closing the request's connection).
- Failures that say the upstream is unreachable (connection refused or dropped, a 5xx, our timeout)
  count against the breaker and drop the session; an answer, even a JSON-RPC error, is the
  upstream alive.
- A 404 for the session (``wire.Expired``) is retried once on a new session: the upstream refused
  the request without processing it (basic/transports.mdx, Session Management: the client MUST
  start a new session); so is a 401 once, with a new token (``auth.forget_token``). A 403 is not
  retried, nor its token dropped (RFC 6750 §3.1: the token is valid, access is not allowed; a new
  token of the same grant would be refused as well): the call fails with the upstream's reason
  (``challenge.Forbidden``), the breaker counting it as an answer.
- With tracing on, each call is a CLIENT span naming the method, the upstream and the original
  name (never the arguments, nor the URL: its query may carry a secret).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from mcp_protocol import tracing
from mcp_protocol.errors import ClientRequestError

from ..kinds.http_client import challenge
from . import auth, stream
from .breaker import CircuitOpen
from .errors import UpstreamForbidden, UpstreamRefused, UpstreamUnauthorized
from .pool import Pooled, UpstreamSessions
from .relay import NeedsCapability, Relay
from .wire import MAX_RESULT_BYTES, Dropped, Expired, Forbidden, RpcError, Unauthorized

__all__ = ["MAX_MESSAGE_CHARS", "MAX_RESULT_BYTES", "TokenRefused", "UpstreamFailure", "run"]

MAX_MESSAGE_CHARS = 1000  # of an upstream's error message, in ours


class UpstreamFailure(Exception):
    """An upstream call that did not produce a result; ``message`` names the upstream."""

    def __init__(self, message: str, code: int | None = None,
                 refusal: challenge.Forbidden | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code  # the upstream's JSON-RPC error code, when it answered with one
        self.refusal = refusal  # the upstream's 403 (its reason, a scope it asked for), if that was it


class TokenRefused(Exception):
    """A per-user session's token was refused (HTTP 401 to the handshake or a request): the
    caller tells the vault and asks the user (``acting.py``); the same token is never retried."""


class _Unreachable(Exception):
    pass


async def run(sessions: UpstreamSessions, config: Any, method: str, name: str, params: dict[str, Any],
              relay: Relay, user: tuple[str, str] | None = None) -> dict[str, Any]:
    """``user``: (principal, token) for an upstream called as the user: that caller's session."""
    upstream = config.name
    async with sessions.lend(config, user) as entry:
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
                    return await _attempt(entry, method, params, relay, phase)
            except TokenRefused:
                if span is not None:
                    span.set_attribute("error.type", "token_refused")
                raise
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


async def _attempt(entry: Pooled, method: str, params: dict[str, Any], relay: Relay,
                   phase: _Phase) -> dict[str, Any]:
    upstream = entry.config.name
    await entry.slots.acquire()  # under the caller's deadline: a full cap waits, then times out
    phase.waiting_for_slot = False
    try:
        for retry in (False, True):
            try:
                live = await entry.session()
            except UpstreamForbidden as exc:  # valid credentials, not allowed: its answer
                entry.breaker.succeeded()
                raise _forbidden(upstream, exc.refusal) from None
            except UpstreamUnauthorized as exc:
                if entry.bearer is not None:  # the user's token, refused at the handshake
                    entry.breaker.succeeded()  # it answered: alive, but not for this user
                    raise TokenRefused() from None
                entry.breaker.failed(f"connect: {exc!r}")
                raise _Unreachable(_describe(exc)) from None
            except Exception as exc:  # refused, TLS, HTTP error, the connect timeout: not reached
                entry.breaker.failed(f"connect: {exc!r}")
                raise _Unreachable(_describe(exc)) from None
            try:
                result = await live.request(method, params, relay)
            except (Expired, Unauthorized) as exc:
                entry.discard(live)  # a new session (and token), the request once more
                if isinstance(exc, Unauthorized) and entry.bearer is not None:
                    entry.breaker.succeeded()  # the user's token: the vault and the user decide
                    raise TokenRefused() from None
                if isinstance(exc, Unauthorized):
                    auth.forget_token(entry.config)
                if not retry:
                    continue
                if isinstance(exc, Unauthorized):
                    entry.breaker.succeeded()  # it answered: alive, but not for us
                    raise UpstreamFailure(f"upstream {upstream}: {exc}") from None
                entry.breaker.failed(str(exc))
                raise _Unreachable(str(exc)) from None
            except Forbidden as exc:  # the session is fine; this request is not allowed
                entry.breaker.succeeded()
                raise _forbidden(upstream, exc.refusal) from None
            except (Dropped, OSError, ConnectionError) as exc:
                entry.discard(live)
                entry.breaker.failed(_describe(exc))
                raise _Unreachable(_describe(exc)) from None
            except RpcError as exc:
                entry.breaker.succeeded()  # it answered: alive, the error is the request's
                said = f"upstream {upstream} answered with an error: {exc.message[:MAX_MESSAGE_CHARS]}"
                raise UpstreamFailure(said, exc.code) from None
            except stream.TooLarge:
                entry.breaker.succeeded()
                said = f"upstream {upstream} answered with more than {MAX_RESULT_BYTES} bytes"
                raise UpstreamFailure(said) from None
            except stream.Malformed:
                entry.breaker.succeeded()
                raise UpstreamFailure(f"upstream {upstream} answered with an invalid result") from None
            except NeedsCapability as exc:
                entry.breaker.succeeded()
                raise UpstreamFailure(f"upstream {upstream} cannot complete this call: {exc}") from None
            except ClientRequestError as exc:  # our client refused what a 2026-07-28 upstream asked
                entry.breaker.succeeded()
                raise UpstreamFailure(f"upstream {upstream} asked the client, which did not answer: "
                                      f"{exc.message[:MAX_MESSAGE_CHARS]}") from None
            except UpstreamRefused as exc:  # our rules, now: nothing was sent
                entry.breaker.abandoned()
                raise UpstreamFailure(f"upstream {upstream}: {exc}") from None
            except asyncio.CancelledError:
                entry.breaker.abandoned()
                raise
            entry.breaker.succeeded()
            return result
        raise AssertionError("unreachable: the second attempt returns or raises")
    finally:
        entry.slots.release()


def _forbidden(upstream: str, refusal: challenge.Forbidden) -> UpstreamFailure:
    return UpstreamFailure(refusal.explain(f"upstream {upstream}"), refusal=refusal)


def _describe(exc: BaseException) -> str:
    """A short reason without the upstream's secrets (no headers, no URL with its query)."""
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(_describe(e) for e in exc.exceptions[:3])
    text = str(exc) or type(exc).__name__
    return text.split("?")[0][:300]
