"""Around every request the core runs: rate limits, the in-flight cap, and the audit log.

``Guard`` is the core's ``Server.interceptor``: ``await guard(method, call, handler)`` instead of
``await handler(call)``. For the current principal (``principal.current``) it

1. refuses when the principal already has ``max_in_flight`` requests running on this worker;
2. takes a token from the principal's bucket (its key's own rate, else ``rate``; on a virtual
   server with a rate of its own, ``EndpointAccess.rate``, that rate in a bucket of that
   endpoint's instead of the default, so two endpoints' buckets are separate) and, for
   ``tools/call`` of a tool it may see, from the (principal, tool) bucket (``tool_rates[name]``,
   else the key's tool rate, else ``tool_rate``), all in one ``RateLimiter.take``;
3. runs the handler and, for ``tools/call``, ``resources/read`` and ``prompts/get``, records an
   ``AuditEntry`` with the outcome and duration.

Refusals (issue 11): a ``tools/call`` gets a tool result with ``isError`` and a message saying when
to retry, so the model sees it; any other method gets a JSON-RPC error -32000 with ``retryAfter``
(seconds) in ``data``. ``initialize`` and ``ping`` are never limited (a client must be able to
start and keep a session). A rate limiter that cannot be reached (Redis down) lets the call
through, with a warning: limits protect capacity, and refusing everything would be the outage.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol, TypeVar

from ..definitions import Tool
from ..endpoints import EndpointSpec
from ..errors import MCPError
from ..session import SHOWN_PREFIX, Session
from .audit import AuditQueue
from .limits import Bucket, InFlight, RateLimiter
from .principal import Principal, Rate

logger = logging.getLogger("mcp_protocol.auth")


class GuardedServer(Protocol):
    """What the guard reads of the server a call is made to (``methods/base.ServerView``)."""

    endpoint: EndpointSpec | None  # the virtual server (endpoints.py); None: the catch-all /mcp
    endpoint_key: str  # its slug, endpoints.CATCH_ALL for /mcp: the audit row's server


class GuardedCall(Protocol):
    """What the guard reads of a method call (``methods/base.Call``): a Protocol, so auth/ does not
    import the method handlers (which import auth/scopes.py for the grant's view)."""

    @property
    def server(self) -> GuardedServer: ...

    params: dict[str, Any]
    session: Session
    version: str
    principal: Principal

    def tool(self, name: str) -> Tool | None: ...


C = TypeVar("C", bound=GuardedCall)

RATE_LIMITED = -32000  # implementation-defined server error range (JSON-RPC 2.0 §5.1)
UNLIMITED = frozenset({"initialize", "ping"})
AUDITED = {"tools/call": "name", "resources/read": "uri", "prompts/get": "name"}


class RateLimited(MCPError):
    code = RATE_LIMITED
    default_message = "Rate limit exceeded"


class Guard:
    def __init__(self, limiter: RateLimiter, *, rate: Rate | None = None, tool_rate: Rate | None = None,
                 tool_rates: Mapping[str, Rate] | None = None, max_in_flight: int | None = None,
                 audit: AuditQueue | None = None) -> None:
        self.limiter, self.rate, self.tool_rate = limiter, rate, tool_rate
        self.tool_rates = dict(tool_rates or {})
        self.in_flight = InFlight(max_in_flight)
        self.audit = audit
        # Any limit at all (a key may still bring its own rate: checked per call).
        self.limited = bool(rate or tool_rate or self.tool_rates or max_in_flight)
        self._warned_at = 0.0
        self._endpoint_rates: dict[str, Rate | None] = {}  # EndpointAccess.rate text → parsed

    async def __call__(
        self, method: str, call: C, handler: Callable[[C], Awaitable[dict[str, Any]]]
    ) -> dict[str, Any]:
        if method in UNLIMITED:
            return await handler(call)
        principal = call.principal
        endpoint = call.server.endpoint
        limited = (self.limited or principal.rate is not None or principal.tool_rate is not None
                   or (endpoint is not None and endpoint.access.rate is not None))
        audited = self.audit is not None and method in AUDITED
        if not (limited or audited):
            return await handler(call)  # open mode without limits or audit: nothing to do
        started, clock = time.time(), time.perf_counter()
        if limited and not self.in_flight.enter(principal.id):
            limit = self.in_flight.limit
            return self._refuse(method, call, 1.0, f"Too many requests in flight (limit {limit})",
                                started, clock)
        try:
            if limited:
                wait = await self._take(method, call)
                if wait > 0:
                    return self._refuse(method, call, wait, "Rate limit exceeded", started, clock)
            if not audited:
                return await handler(call)
            try:
                result = await handler(call)
            except MCPError as exc:
                self._record(method, call, "error", f"{exc.code} {exc.message}", started, clock)
                raise
            except BaseException as exc:
                self._record(method, call, "error", type(exc).__name__, started, clock)
                raise
            if result.get("isError"):
                self._record(method, call, "tool_error", _text(result), started, clock)
            else:
                self._record(method, call, "ok", "", started, clock)
            return result
        finally:
            if limited:
                self.in_flight.leave(principal.id)

    async def _take(self, method: str, call: GuardedCall) -> float:
        principal = call.principal
        buckets: list[Bucket] = []
        endpoint = call.server.endpoint
        own = None if endpoint is None else self.endpoint_rate(endpoint)
        # A key's own rate stays its cap across the deployment; an endpoint's rate replaces only
        # the default, in a bucket of the endpoint's.
        rate = principal.rate or (None if own is not None else self.rate)
        if rate is not None:
            buckets.append(("all", rate))
        if own is not None and endpoint is not None:
            buckets.append((f"server:{endpoint.slug}", own))
        if method == "tools/call":
            name = call.params.get("name")
            if isinstance(name, str) and call.tool(name) is not None:
                tool_rate = self.tool_rates.get(name) or principal.tool_rate or self.tool_rate
                if tool_rate is not None:
                    buckets.append((f"tool:{name}", tool_rate))
        if not buckets:
            return 0.0
        try:
            return await self.limiter.take(principal.id or "anonymous", buckets)
        except Exception as exc:
            now = time.monotonic()
            if now - self._warned_at > 10:
                logger.warning("rate limiter unavailable, not limiting: %s", exc)
                self._warned_at = now
            return 0.0

    def endpoint_rate(self, endpoint: EndpointSpec) -> Rate | None:
        """The endpoint's own per-principal rate, parsed once per text (a rate the registry let
        through that does not parse is no limit, reported once, never a failed call)."""
        text = endpoint.access.rate
        if text is None:
            return None
        if text not in self._endpoint_rates:
            try:
                self._endpoint_rates[text] = Rate.parse(text)
            except ValueError:
                logger.warning("virtual server %r: rate %r is not N/S; not limiting", endpoint.slug, text)
                self._endpoint_rates[text] = None
        return self._endpoint_rates[text]

    def _refuse(self, method: str, call: GuardedCall, wait: float, why: str, started: float,
                clock: float) -> dict[str, Any]:
        retry = math.ceil(wait * 10) / 10
        self._record(method, call, "rate_limited", why, started, clock)
        if method == "tools/call":
            text = f"{why}: retry in {retry:g} s"
            return {"content": [{"type": "text", "text": text}], "isError": True}
        raise RateLimited(why, {"retryAfter": retry})

    def _record(self, method: str, call: GuardedCall, outcome: str, error: str, started: float,
                clock: float) -> None:
        audit = self.audit
        if audit is None or method not in AUDITED:
            return
        principal = call.principal
        params = call.params
        name = params.get(AUDITED[method])
        session = call.session
        # A Row (audit.py), AuditEntry's fields in order: no dataclass per call on this thread. Of
        # the session id only its first characters: the id is a credential, the log is read by staff.
        audit.add((started, principal.label, principal.id,
                   None if session.stateless else session.id[:SHOWN_PREFIX],
                   call.version, method, name if isinstance(name, str) else "",
                   params.get("arguments") if method != "resources/read" else None,
                   outcome, error[:500], (time.perf_counter() - clock) * 1000, call.server.endpoint_key))


def _text(result: Mapping[str, Any]) -> str:
    for block in result.get("content") or ():
        if isinstance(block, dict) and block.get("type") == "text":
            return str(block.get("text", ""))
    return "isError"
