"""The session's bus channel on this worker: client messages meant for a request running here.

[L] basic/transports.mdx: a client's follow-up messages are *new* POSTs, which may land on any
worker. Two kinds concern a request that runs on another one:

- a response to a server→client request (sampling, elicitation, roots), sent on the SSE stream of
  the client request it belongs to. The worker whose handler waits subscribes to the bus channel
  ``session:<id>`` *before* it sends the request; whichever worker receives the response resolves
  the future directly when it holds it, or publishes it on that channel. Request ids are
  ``<worker>-<n>``: unique in the session across workers.
- ``notifications/cancelled`` ([L] basic/utilities/cancellation.mdx): the receiving worker cancels
  the request when it runs there (``on_cancel``, i.e. ``Server.cancel``), or else publishes the
  notification on that channel, and the worker running it cancels it. Cancellation is best
  effort (the spec lets a receiver ignore a cancel for a request it does not know): a request
  listens only once it is worth cancelling (see ``streams.PostStream``), so a fast one costs no
  bus round trip.

One subscription per session with anything in flight on this worker (``acquire``/``release`` count
its users), shared by both kinds and closed when the last user leaves.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import secrets
from collections.abc import Awaitable, Callable
from typing import Any

from .. import tracing
from ..bus.base import Bus, Subscription, session_channel
from ..errors import ClientRequestError
from ..jsonrpc import RequestId, Response, request

logger = logging.getLogger("mcp_protocol.transports")

CANCELLED = "notifications/cancelled"
# Internal, on the bus only (never sent to a client): the session was DELETEd on another worker.
SESSION_ENDED = "mcpsite/sessionEnded"
CancelHere = Callable[[str, RequestId], bool]
EndHere = Callable[[str], None]
_Key = tuple[str, RequestId]
# A client's answer and the trace context of the request that carried it (the POST that brought
# it, on whichever worker: empty when tracing is off).
_Answer = tuple[Response, dict[str, str]]


def _nothing_here(session_id: str, request_id: RequestId) -> bool:
    return False


def _no_session_here(session_id: str) -> None:
    return None


def cancelled_request_id(params: Any) -> RequestId | None:
    """The ``requestId`` of a ``notifications/cancelled``; ``None`` when absent or malformed."""
    request_id = params.get("requestId") if isinstance(params, dict) else None
    if isinstance(request_id, str | int) and not isinstance(request_id, bool):
        return request_id
    return None


async def ask(
    pending: PendingRequests,
    session_id: str,
    send: Callable[[dict[str, Any]], Awaitable[None]],
    method: str,
    params: dict[str, Any] | None,
    timeout: float,
) -> dict[str, Any]:
    """One server→client request: listen for the answer first (it may reach any worker), then
    ``send`` the request on its stream, and wait ``timeout`` seconds. Returns the ``result``;
    raises ``ClientRequestError`` for an error reply or none in time."""
    request_id = pending.new_id()
    attributes = {"mcp.method.name": method, "jsonrpc.request.id": request_id}
    # A CLIENT span: here the server is the one asking. The answer may come in a POST to another
    # worker; that POST's span is linked to this one, so the trace shows where it was answered.
    with tracing.child(method, attributes, client=True):
        future = await pending.expect(session_id, request_id)
        try:
            await send(request(request_id, method, params))
            try:
                response, answered_in = await asyncio.wait_for(future, timeout)
            except TimeoutError:
                silence = f"The client sent no response to {method} within {timeout:g} s"
                raise ClientRequestError(silence) from None
        finally:
            await pending.release(session_id, request_id)
        tracing.link(answered_in)
    if response.error is not None:
        raise ClientRequestError(f"The client answered {method} with an error", response.error)
    return response.result or {}


class CancelWatch:
    """One client request's hold on its session's channel, taken once the request is worth
    cancelling from another worker and given back when its stream closes. Best effort: if the
    bus fails, the request goes on, cancellable only where it runs."""

    __slots__ = ("_pending", "_session_id", "_task")

    def __init__(self, pending: PendingRequests, session_id: str) -> None:
        self._pending, self._session_id = pending, session_id
        self._task: asyncio.Future[bool] | None = None

    @property
    def settled(self) -> bool:
        return self._task is not None and self._task.done()

    def start(self) -> asyncio.Future[bool]:
        """Begin subscribing (idempotent; also a plain callback for ``loop.call_later``)."""
        if self._task is None:
            self._task = asyncio.ensure_future(self._acquire())
        return self._task

    async def ready(self) -> None:
        """Return once the subscription is confirmed (or failed)."""
        await asyncio.shield(self.start())

    async def _acquire(self) -> bool:
        try:
            await self._pending.acquire(self._session_id)
        except Exception as exc:
            logger.warning("cannot listen for cancellation of a request: %s", exc)
            return False
        return True

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is None:
            return
        task.cancel()  # still subscribing: it then holds nothing
        await asyncio.wait((task,))
        if not task.cancelled() and task.result():
            await self._pending.release(self._session_id)


class _Listener:
    def __init__(self, subscription: Subscription, task: asyncio.Task[None]) -> None:
        self.subscription = subscription
        self.task = task
        self.users = 0


class PendingRequests:
    def __init__(
        self, bus: Bus, on_cancel: CancelHere = _nothing_here, on_session_end: EndHere = _no_session_here
    ) -> None:
        self._bus = bus
        self._on_cancel = on_cancel
        self._on_session_end = on_session_end
        self._prefix = "s" + secrets.token_hex(4)
        self._counter = itertools.count(1)
        self._futures: dict[_Key, asyncio.Future[_Answer]] = {}
        self._listeners: dict[str, _Listener] = {}
        self._lock = asyncio.Lock()

    def new_id(self) -> str:
        return f"{self._prefix}-{next(self._counter)}"

    # -- the session's subscription -------------------------------------------------------------
    async def acquire(self, session_id: str) -> None:
        """Hold the session's subscription; it exists (confirmed by the bus) when this returns.
        Cancelled midway, it holds nothing."""
        async with self._lock:
            listener = self._listeners.get(session_id)
            if listener is None:
                subscription = await self._bus.subscribe(session_channel(session_id))
                task = asyncio.create_task(self._listen(session_id, subscription))
                listener = self._listeners[session_id] = _Listener(subscription, task)
            listener.users += 1

    async def release(self, session_id: str, request_id: RequestId | None = None) -> None:
        """Give the subscription back (and forget ``request_id``'s waiter, if given)."""
        if request_id is not None:
            self._futures.pop((session_id, request_id), None)
        async with self._lock:
            listener = self._listeners.get(session_id)
            if listener is None:
                return
            listener.users -= 1
            if listener.users <= 0:
                del self._listeners[session_id]
                await listener.subscription.close()
                listener.task.cancel()

    # -- server→client requests -----------------------------------------------------------------
    async def expect(self, session_id: str, request_id: RequestId) -> asyncio.Future[_Answer]:
        """Register a waiter; the bus subscription exists when this returns. Pair with
        ``release(session_id, request_id)``."""
        future: asyncio.Future[_Answer] = asyncio.get_running_loop().create_future()
        await self.acquire(session_id)
        self._futures[(session_id, request_id)] = future
        return future

    async def deliver(self, session_id: str, response: Response) -> None:
        """A client's response arrived on this worker: resolve here, or hand it to the others."""
        if response.id is None:
            return  # an error about an unparseable request of ours: nothing to resume
        answered_in = tracing.carrier()
        if self._resolve(session_id, response, answered_in):
            return
        message: dict[str, Any] = {"id": response.id}
        if response.error is not None:
            message["error"] = response.error
        else:
            message["result"] = response.result
        if answered_in:
            message["trace"] = answered_in
        await self._bus.publish(session_channel(session_id), message)

    def _resolve(self, session_id: str, response: Response, answered_in: object) -> bool:
        future = self._futures.get((session_id, response.id)) if response.id is not None else None
        if future is None or future.done():
            return False
        carried = answered_in if isinstance(answered_in, dict) else {}
        future.set_result((response, {k: v for k, v in carried.items() if isinstance(v, str)}))
        return True

    # -- cancellation ---------------------------------------------------------------------------
    async def cancel(self, session_id: str, params: dict[str, Any] | None) -> None:
        """A client's ``notifications/cancelled`` arrived on this worker: cancel the request here
        if it runs here, else tell the worker that runs it (if any: unknown ids are ignored)."""
        request_id = cancelled_request_id(params)
        if request_id is None or self._on_cancel(session_id, request_id):
            return
        forwarded: dict[str, Any] = {"requestId": request_id}
        if isinstance(params, dict) and isinstance(params.get("reason"), str):
            forwarded["reason"] = params["reason"]
        message = {"jsonrpc": "2.0", "method": CANCELLED, "params": forwarded}
        await self._bus.publish(session_channel(session_id), message)

    async def end_session(self, session_id: str) -> None:
        """The session was deleted here: requests of it running on other workers stop too (those
        listening on the session's channel: the ones worth cancelling, see ``CancelWatch``)."""
        await self._bus.publish(session_channel(session_id), {"method": SESSION_ENDED})

    # -- the listener ---------------------------------------------------------------------------
    async def _listen(self, session_id: str, subscription: Subscription) -> None:
        try:
            async for message in subscription:
                if message.get("method") == SESSION_ENDED:
                    self._on_session_end(session_id)
                    continue
                if message.get("method") == CANCELLED:
                    request_id = cancelled_request_id(message.get("params"))
                    if request_id is not None:
                        self._on_cancel(session_id, request_id)
                    continue
                request_id = message.get("id")
                if isinstance(request_id, str | int):
                    answer = Response(request_id, message.get("result"), message.get("error"))
                    self._resolve(session_id, answer, message.get("trace"))
        except asyncio.CancelledError:
            raise
        except Exception:
            logger.exception("session-channel listener for session %s failed", session_id)

    async def close(self) -> None:
        for future in self._futures.values():
            future.cancel()
        self._futures.clear()
        for listener in self._listeners.values():
            with contextlib.suppress(Exception):
                await listener.subscription.close()
            listener.task.cancel()
        self._listeners.clear()
