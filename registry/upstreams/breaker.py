"""A circuit breaker per upstream, per worker loop: a dead upstream fails its calls fast instead of
making each of them wait for its connect timeout (issue 40, "a circuit breaker per upstream").

- closed: calls go through; ``threshold`` consecutive failures (connection refused or dropped, a
  timeout: the upstream did not answer) open it. An upstream's JSON-RPC error or an ``isError``
  result is an answer, so a success for the breaker.
- open: calls fail at once with "upstream X is unavailable (circuit open)", for ``cooldown``
  seconds; then
- half-open: one call goes through as a probe (the others still fail fast); its success closes
  the breaker, its failure opens it for another cool-down.

State changes are counted on ``/metrics`` (``mcp_upstream_circuit_open{upstream}``, 1 while open
or half-open) and told to ``listeners`` (the health writer of the sync subscribes: a breaker
opening is the upstream's health going down between syncs). One breaker per upstream, never a
global one: a dead upstream cannot slow another's calls.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from django.conf import settings
from prometheus_client import Gauge

logger = logging.getLogger(__name__)

CLOSED, OPEN, HALF_OPEN = "closed", "open", "half_open"
DEFAULT_THRESHOLD = 5  # consecutive failures
DEFAULT_COOLDOWN = 30.0  # seconds open before a probe

CIRCUIT = Gauge(
    "mcp_upstream_circuit_open", "1 while the upstream's circuit breaker is open or half-open.",
    ["upstream"], multiprocess_mode="livemax",
)

# (upstream name, new state, detail): called on every state change. A listener must not block
# (it runs on the serving loop): the health writer queues its write.
Listener = Callable[[str, str, str], Any]
listeners: list[Listener] = []


def threshold() -> int:
    return int(getattr(settings, "REGISTRY_UPSTREAM_BREAKER_FAILURES", DEFAULT_THRESHOLD))


def cooldown() -> float:
    return float(getattr(settings, "REGISTRY_UPSTREAM_BREAKER_COOLDOWN", DEFAULT_COOLDOWN))


class CircuitOpen(Exception):
    def __init__(self, upstream: str) -> None:
        super().__init__(f"upstream {upstream} is unavailable (circuit open)")


class Breaker:
    def __init__(self, upstream: str, *, failures: int | None = None, cool: float | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.upstream = upstream
        self.threshold = failures if failures is not None else threshold()
        self.cooldown = cool if cool is not None else cooldown()
        self.clock = clock
        self.state = CLOSED
        self.failures = 0
        self._opened_at = 0.0
        self._probing = False

    def admit(self) -> bool:
        """Whether a call may go now (raising nothing: ``check`` raises)."""
        if self.state == CLOSED:
            return True
        if self.state == OPEN and self.clock() - self._opened_at >= self.cooldown:
            self._move(HALF_OPEN, "cool-down over: one probe call")
        if self.state == HALF_OPEN and not self._probing:
            self._probing = True
            return True
        return False

    def check(self) -> None:
        if not self.admit():
            raise CircuitOpen(self.upstream)

    def succeeded(self) -> None:
        self.failures = 0
        self._probing = False
        if self.state != CLOSED:
            self._move(CLOSED, "a call succeeded")

    def failed(self, detail: str) -> None:
        self._probing = False
        self.failures += 1
        if self.state == HALF_OPEN or (self.state == CLOSED and self.failures >= self.threshold):
            self._opened_at = self.clock()
            self._move(OPEN, detail)

    def abandoned(self) -> None:
        """The call was cancelled by our client: says nothing of the upstream; a probe's slot frees."""
        self._probing = False

    def _move(self, state: str, detail: str) -> None:
        self.state = state
        CIRCUIT.labels(self.upstream).set(0 if state == CLOSED else 1)
        log = logger.warning if state == OPEN else logger.info
        log("upstream %s: circuit %s (%s)", self.upstream, state, detail)
        for listener in list(listeners):
            try:
                listener(self.upstream, state, detail)
            except Exception:
                logger.exception("upstream breaker listener failed")
