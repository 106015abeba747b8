"""The response stream of one legacy POST.

[L] basic/transports.mdx "Sending Messages to the Server", "Listening for Messages from the
Server", "Resumability and Redelivery". Every event of a legacy stream is appended to the event
store *before* it is written, under the id ``<stream>.<seq>``, so a client that lost the
connection gets exactly the rest of that stream, and never another's, with a GET carrying
``Last-Event-ID`` — on any worker. Disconnection is not cancellation in the legacy era: the
handler keeps running and its events keep going to the store. The log's internal markers and
the stream ids are ``stream_log.py``.

A request that is worth cancelling — it streams something before its result, or is still running
after ``CANCEL_WATCH_AFTER`` — holds its session's bus subscription (``pending.py``) until its
stream closes, so a ``notifications/cancelled`` POSTed to another worker reaches it. A fast
request never touches the bus.

Serving a log (the GET stream, resumes) is ``replay.py``; the 2026-07-28 response stream (no
ids, no store) is ``modern.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Coroutine, Sequence
from typing import TYPE_CHECKING, Any

from ..jsonrpc import RequestId, dumps, notification
from ..outbound import Outbound
from ..session import Session
from ..versions import sends_priming_event
from . import sse
from .pending import CancelWatch, ask
from .responses import JSON_HEADERS, Receive, Send, send_bytes
from .stream_log import END_WIRE, first_entry, new_stream_id
from .timer_wheel import Bucket
from .watch import EndSignal, StreamWatch

if TYPE_CHECKING:
    from .request_leases import RequestLease
    from .runtime import Runtime

# Both on the runtime's coarse wheel (timer_wheel.py): each fires 0.1-0.15 s after it was armed.
CANCEL_WATCH_AFTER = 0.1  # s: a silent request still running then starts listening for cancels
WATCH_AFTER = 0.1  # s: an always-stream POST stream still open then gets its StreamWatch


class PostStream(Outbound):
    """The response to one legacy POST: JSON unless something must be streamed first."""

    def __init__(self, rt: Runtime, session: Session, send: Send, receive: Receive,
                 request_ids: Sequence[RequestId] = ()) -> None:
        self.rt, self.session, self.send, self.receive = rt, session, send, receive
        self.request_ids = list(request_ids)
        self.lease: RequestLease | None = None
        self._leasing: asyncio.Future[None] | None = None  # the lease's take, once started
        self.priming = sends_priming_event(session.protocol_version)
        self.writer: sse.SSEWriter | None = None
        self.stream_id = ""
        self.watch: StreamWatch | None = None
        self._watch_timer: asyncio.TimerHandle | None = None  # a close_after sooner than WATCH_AFTER
        self._watch_armed: Bucket | None = None  # the usual WATCH_AFTER, on the coarse wheel
        self._first: bytes | None = None  # the log's first entry while a lazy stream defers it
        self._opening: asyncio.Future[None] | None = None  # its append, once started
        self._flush: asyncio.Future[None] | None = None
        self._close_after: float | None = None
        self._opened_at = 0.0
        self.ended: EndSignal | None = None
        # [L] basic/utilities/cancellation.mdx: the cancel may be POSTed to any worker.
        self.cancel_watch = CancelWatch(rt.pending, session.id)

    async def open(self, close_after: float | None = None, *, lazy: bool = False) -> None:
        """Start the SSE response. ``lazy``: the handler has not run yet (always-stream); its
        ``StreamWatch`` starts only if the stream is still open WATCH_AFTER seconds later."""
        self.stream_id = new_stream_id()
        self.writer = writer = sse.SSEWriter(self.send)
        await writer.start()
        # The log's first entry names the ids the stream answers, and the lease says who runs
        # them: if this worker dies, a resume elsewhere answers them with an error (request_leases.py).
        # A lazy stream defers both until before its first event id goes out (_resumable): a
        # client holds no id of it until then, so nothing can read the log or need the lease;
        # answered within WATCH_AFTER, its first entry goes to the store in ``finish``'s one
        # step with the response and the end marker.
        self._first = first_entry(self.request_ids, priming=self.priming)
        if not lazy:
            await self._hold_lease()
            await self._append_first()
        self.ended = self.rt.register_stream(self.session.id)
        # Only a client that got an id can resume, so only then may the server close early.
        self._close_after = close_after if self.priming else None
        delay = WATCH_AFTER if lazy else 0.0
        if self._close_after is not None:
            self._opened_at = asyncio.get_running_loop().time()
            delay = min(delay, self._close_after)
        # A stream answered sooner (the usual always-stream tools/call) never starts a watch:
        # a client that left meanwhile only fails a write, a DELETE is seen by ``finish``.
        if delay == WATCH_AFTER:
            self._watch_armed = self.rt.later.arm(delay, self._start_watch)
        elif delay > 0:  # a close_after sooner than that: on time
            self._watch_timer = asyncio.get_running_loop().call_later(delay, self._start_watch)
        else:
            self._start_watch()

    def _start_watch(self) -> None:
        self._watch_timer = self._watch_armed = None
        writer = self.writer
        if writer is None or writer.closed or self.ended is None or self.watch is not None:
            return
        cfg = self.rt.config
        close_after = self._close_after
        if close_after is not None:  # counted from the stream's opening
            close_after = max(0.0, close_after - (asyncio.get_running_loop().time() - self._opened_at))
        self.watch = StreamWatch(
            writer,
            self.receive,
            keepalive=cfg.keepalive,
            ended=self.ended,
            retry_ms=cfg.retry_ms if self.priming else None,
            close_after=close_after,
        )
        if writer.holding or (self.priming and self._first is not None):
            # The priming event waited for a response that has not come: it goes out now.
            self._flush = asyncio.ensure_future(self._lease_then_flush(writer))

    def _hold_lease(self) -> asyncio.Future[None]:
        """Take the request's lease (request_leases.py), once. Taken before the client can hold an event
        id of this stream: only a client with an id can resume it on another worker, and only
        that resume needs the lease to tell a running owner from a dead one. So an always-stream
        call answered within WATCH_AFTER (priming, response and end in one write, the log
        complete before it) takes none: ~6 us of its CPU, in-process
        (bench/results/2026-11-24-hot-path-issue16.md)."""
        if self._leasing is None:
            self.lease = self.rt.leases.lease(self.session.id, self.stream_id, self.request_ids)
            self._leasing = asyncio.ensure_future(self.lease.take())
        return self._leasing

    async def _append_first(self) -> None:
        """Append the log's first entry now (once); a priming stream then holds its event."""
        first, self._first = self._first, None
        if first is None:
            return
        (event_id,) = await self.rt.events.append_encoded(self.session.id, self.stream_id, [first])
        if self.priming and self.writer is not None:
            # [11] "immediately send" the priming event: with the first event or the response
            # when one follows within WATCH_AFTER (one socket write for both), else it is
            # flushed when the watch starts.
            self.writer.hold(sse.priming(event_id, self.rt.config.retry_ms))

    def _opened_log(self) -> asyncio.Future[None]:
        """The deferred first entry's append, started once, shared by the handler's events and
        the watch's flush (whichever comes first; the other waits for it)."""
        if self._opening is None:
            self._opening = asyncio.ensure_future(self._append_first())
        return self._opening

    async def _resumable(self) -> None:
        """Before a client can hold an event id of this stream: its log begins with the first
        entry, and the lease is held."""
        if self._first is not None or self._opening is not None:
            await asyncio.shield(self._opened_log())
        leasing = self._hold_lease()
        if not leasing.done():
            # Shielded: a handler cancelled meanwhile leaves the take to close(), which awaits it.
            await asyncio.shield(leasing)

    async def _lease_then_flush(self, writer: sse.SSEWriter) -> None:
        await self._resumable()
        await writer.flush()

    @property
    def session_ended(self) -> bool:
        # Streams also end when the worker is stopping; the handler then runs on, and its events
        # and response must still reach the log, where the client's resumed stream reads them.
        return self.ended is not None and self.ended.is_set() and not self.rt.stopping

    async def emit(self, message: dict[str, Any]) -> None:
        if self.session_ended:
            return  # DELETEd: its log is gone and must not be recreated by a late event
        if not self.cancel_watch.settled:
            # Listening before the client sees anything: once it has, it can cancel from anywhere.
            await self.cancel_watch.ready()
        if self.writer is None:
            await self.open(self.rt.config.close_after)
        assert self.writer is not None
        wire = dumps(message)  # stored and sent as it is: one serialization
        await self._resumable()
        (event_id,) = await self.rt.events.append_encoded(self.session.id, self.stream_id, [wire])
        await self.writer.write(sse.frame(wire, event_id))

    async def notify(self, method: str, params: dict[str, Any] | None) -> None:
        await self.emit(notification(method, params))

    async def request(self, method: str, params: dict[str, Any] | None, timeout: float) -> dict[str, Any]:
        return await ask(self.rt.pending, self.session.id, self.emit, method, params, timeout)

    async def close_stream(self) -> None:
        """SEP-1699: end the HTTP response now (after ``retry``); the client resumes with GET +
        Last-Event-ID and gets the rest. Handlers call it as ``ctx.close_stream()``."""
        if not self.priming:
            return  # older clients had no id to resume from
        if self.writer is None:
            await self.open(close_after=0.0)
        elif self.writer and not self.writer.closed:
            await self._resumable()  # the client resumes from the priming event's id
            await self.writer.close(self.rt.config.retry_ms)

    async def run(self, work: Coroutine[Any, Any, dict[str, Any] | None]) -> dict[str, Any] | None:
        """Await the handler; with CLOSE_STREAM_AFTER_SECONDS a slow one gets an SSE stream that
        is closed early so the client polls for the result."""
        later = self.rt.later
        armed = later.arm(CANCEL_WATCH_AFTER, self.cancel_watch.start)
        try:
            return await self._run(work)
        finally:
            later.disarm(armed, self.cancel_watch.start)

    async def _run(self, work: Coroutine[Any, Any, dict[str, Any] | None]) -> dict[str, Any] | None:
        cfg = self.rt.config
        if cfg.always_stream:
            await self.open(cfg.close_after, lazy=True)
        if cfg.close_after is None or not self.priming or self.writer is not None:
            return await work
        task = asyncio.ensure_future(work)
        try:
            done, _ = await asyncio.wait((task,), timeout=cfg.close_after)
            if not done and self.writer is None:
                await self.open(close_after=0.0)
            return await task
        except asyncio.CancelledError:
            task.cancel()
            raise

    async def finish(
        self,
        responses: Sequence[dict[str, Any]],
        *,
        batch: bool = False,
        headers: Sequence[tuple[bytes, bytes]] = (),
    ) -> None:
        writer = self.writer
        if writer is None:
            if not responses:
                # A cancelled request: no response will ever come ([L] cancellation.mdx), yet a
                # POST carrying a request is answered with JSON or an event stream, never 202
                # (202 is for notifications and responses): an event stream with no events.
                writer = sse.SSEWriter(self.send)
                await writer.start(headers)
                await writer.close()
                return
            body = dumps(list(responses)) if batch else dumps(responses[0])
            await send_bytes(self.send, 200, body, [*JSON_HEADERS, *headers])
            return
        try:
            if self.session_ended:
                return
            # The responses and the end marker in one store step (Redis: one round trip), each
            # response serialized once: the log keeps the bytes the stream sends. A lazy stream
            # answered before anything went out puts its deferred first entry in the same step.
            if self._opening is not None:
                await asyncio.shield(self._opening)
            first, self._first = self._first, None
            wires = [dumps(response) for response in responses]
            event_ids = await self.rt.events.append_encoded(
                self.session.id, self.stream_id, [first, *wires, END_WIRE] if first else [*wires, END_WIRE],
                final=True)
            head = b""
            if first is not None:
                first_id, event_ids = event_ids[0], event_ids[1:]
                if self.priming:
                    head = sse.priming(first_id, self.rt.config.retry_ms)
            # The priming event, the last events and the end of the response: one ASGI message.
            await writer.close(tail=head + b"".join(
                sse.frame(wire, event_id) for wire, event_id in zip(wires, event_ids, strict=False)))
        finally:
            await self.close()

    async def close(self) -> None:
        """Release the stream (idempotent): stop the watcher, end the HTTP response if it is an
        open SSE one, forget the stream. Also the cleanup when the request failed midway."""
        if self._watch_timer is not None:
            self._watch_timer.cancel()
            self._watch_timer = None
        if self._watch_armed is not None:
            self.rt.later.disarm(self._watch_armed, self._start_watch)
            self._watch_armed = None
        if self.watch is not None:
            watch, self.watch = self.watch, None
            await watch.stop()
        if self._flush is not None:
            flush, self._flush = self._flush, None
            await flush
        if self._opening is not None:
            opening, self._opening = self._opening, None
            with contextlib.suppress(Exception):
                await opening
        if self.writer is not None:
            # The session ended (DELETE) while the stream was open: a retry first, as the watch
            # would have sent had it got there before the handler's end ([11] "Resumability").
            by_session = self.session_ended and self.priming
            await self.writer.close(self.rt.config.retry_ms if by_session else None)
        if self.ended is not None:
            ended, self.ended = self.ended, None
            self.rt.unregister_stream(self.session.id, ended)
        if self._leasing is not None:
            # A take still under way ends before the release, or it would outlive it.
            leasing, self._leasing = self._leasing, None
            with contextlib.suppress(Exception):
                await leasing
        if self.lease is not None:
            lease, self.lease = self.lease, None
            await lease.release()
        await self.cancel_watch.stop()


