"""A running request's lease: a request never outlives its worker silently.

A legacy POST whose response became an event stream can be resumed on any worker (``replay.py``),
but only the worker running the handler can write its response. If that worker dies (kill -9,
OOM, a lost machine) the resumed stream used to wait forever. So:

- The owner holds a short lease on the request's stream while the handler runs: a record with
  an owner and a TTL of ``LEASE`` seconds, renewed every ``RENEW`` seconds, released when the
  response is in the log. It is the stream claim primitive (``ClaimStore.claim_stream`` /
  ``refresh_stream`` / ``release_stream``: owner + TTL, compare-and-refresh, compare-and-delete,
  shared by every worker) under the id ``<session>:req:<stream>``.
- The request ids the stream answers are in the log's first entry (a marker, never sent), so any
  worker can answer them without asking the owner.
- A worker serving a resume of that stream (``watch_orphan``) tries to take the lease every
  ``POLL`` seconds. Taking it means the owner stopped renewing it: the worker appends a JSON-RPC
  error response for each request id (-32603, "the worker running this request stopped; the
  request may be retried": JSON-RPC 2.0 §5.1 internal error) and the stream's end marker, once
  across workers (``ClaimStore.claim_once``), and the resumed stream delivers them and ends.
  So the client gets its answer within ``LEASE + POLL`` seconds of the owner's death.

A server→client request (sampling, elicitation, roots) belongs to the request whose handler sent
it: when that handler's worker dies, the client's answer reaches nobody, and the request itself
ends with this error as above.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import secrets
from collections.abc import AsyncIterator, Sequence
from typing import Any

from ..errors import WorkerStopped
from ..jsonrpc import RequestId, error_response
from ..stores.claims import Claim
from ..stores.events import EventStore
from .stream_log import END, MARKER

logger = logging.getLogger("mcp_protocol.leases")

LEASE = 5.0  # s: an owner that stops renewing loses its requests' leases after this
RENEW = LEASE / 3
POLL = 1.0  # s: how often a resume checks the owner's lease
DONE_TTL = 3600.0


def lease_id(session_id: str, stream_id: str) -> str:
    return f"{session_id}:req:{stream_id}"


def stopped_responses(request_ids: Sequence[RequestId]) -> list[dict[str, Any]]:
    return [error_response(rid, WorkerStopped()) for rid in request_ids]


async def answer_for_the_dead(
    events: EventStore, session_id: str, stream_id: str, request_ids: Sequence[RequestId]
) -> bool:
    """Append the error responses and the end marker to the stream, once across workers."""
    key = f"orphan:{session_id}:{stream_id}"
    if await events.claims.claim_once(key, LEASE) not in (Claim.WON, Claim.RETAKEN):
        return False
    await events.append_many(session_id, stream_id, [*stopped_responses(request_ids), END])
    await events.claims.finish_once(key, DONE_TTL)
    return True


class RequestLease:
    """The owner's side: taken when the stream opens, renewed, released once answered."""

    def __init__(self, leases: Leases, session_id: str, stream_id: str, request_ids: Sequence[RequestId]):
        self.leases, self.session_id, self.stream_id = leases, session_id, stream_id
        self.request_ids = list(request_ids)
        self.id = lease_id(session_id, stream_id)
        self.owner = f"{leases.worker}.{next(leases.serial)}"  # unique: the worker's id is random
        self._timer: asyncio.TimerHandle | None = None
        self._task: asyncio.Task[None] | None = None

    async def take(self) -> None:
        await self.leases.claims.claim_stream(self.id, self.owner, LEASE, take_over=True)
        # A timer, not a task, until the first renewal is due: most requests are answered long
        # before, and then never pay for one.
        self._timer = asyncio.get_running_loop().call_later(RENEW, self._start_renewing)
        self.leases.active.add(self)

    def _start_renewing(self) -> None:
        self._timer = None
        self._task = asyncio.create_task(self._renew())

    async def _renew(self) -> None:
        while True:
            try:
                await self.leases.claims.refresh_stream(self.id, self.owner, LEASE)
            except Exception as exc:  # Redis away for a moment: the next renewal may still make it
                logger.warning("could not renew the lease of %s: %s", self.id, exc)
            await asyncio.sleep(RENEW)

    async def release(self) -> None:
        self.leases.active.discard(self)
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._task is not None:
            self._task.cancel()
            self._task = None
        with contextlib.suppress(Exception):
            await self.leases.claims.release_stream(self.id, self.owner)


class Leases:
    """This worker's leased requests (one per process and loop, owned by the runtime)."""

    def __init__(self, events: EventStore) -> None:
        self.events, self.claims = events, events.claims
        self.worker = secrets.token_hex(6)
        self.serial = itertools.count(1)
        self.active: set[RequestLease] = set()

    def lease(self, session_id: str, stream_id: str, request_ids: Sequence[RequestId]) -> RequestLease:
        return RequestLease(self, session_id, stream_id, request_ids)

    @contextlib.asynccontextmanager
    async def watch_orphan(self, session_id: str, stream_id: str) -> AsyncIterator[None]:
        """While a resume of ``stream_id`` is served here: end it with the error if its owner dies."""
        task = asyncio.create_task(self._watch(session_id, stream_id))
        try:
            yield
        finally:
            task.cancel()
            with contextlib.suppress(BaseException):
                await task

    async def _watch(self, session_id: str, stream_id: str) -> None:
        probe = f"{self.worker}.probe.{secrets.token_hex(4)}"
        lid = lease_id(session_id, stream_id)
        while True:
            await asyncio.sleep(POLL)
            try:
                if not await self.claims.claim_stream(lid, probe, LEASE):
                    continue  # the owner holds it: still running
                ids = await self._request_ids(session_id, stream_id)
                if ids is None:
                    return  # not a request stream we know (or its log is gone)
                if await answer_for_the_dead(self.events, session_id, stream_id, ids):
                    logger.warning("the worker running stream %s of session %s stopped: answered %s",
                                   stream_id, session_id, ids)
                return
            except Exception as exc:  # the store is away: look again at the next poll
                logger.debug("orphan check of %s failed: %s", lid, exc)

    async def _request_ids(self, session_id: str, stream_id: str) -> list[RequestId] | None:
        events = self.events.listen(session_id, stream_id, None)
        try:
            async with asyncio.timeout(LEASE):
                first = await anext(events)
        except (StopAsyncIteration, TimeoutError):
            return None
        finally:
            with contextlib.suppress(Exception):
                await events.aclose()  # type: ignore[attr-defined]
        marker = first.message
        if marker.get(MARKER) in ("open", "prime") and isinstance(marker.get("ids"), list):
            return list(marker["ids"])
        return None
