"""Serving a session's log as an SSE response: the standalone GET stream, and the resume of any
stream with ``Last-Event-ID`` ([L] basic/transports.mdx "Listening for Messages from the Server",
"Resumability and Redelivery").

Events come from ``EventStore.listen``: the ones after the starting position, then live ones, on
any worker, until the stream's ``end`` marker, a disconnect, or the session ending. Internal
markers (``stream_log.MARKER``) are never sent.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, NamedTuple, Protocol

from ..jsonrpc import dumps
from ..store_errors import StoreUnavailable, StreamLagging
from ..stores.events import Event
from ..versions import sends_priming_event
from . import sse
from .responses import Receive, Send, logger
from .stream_log import MARKER
from .watch import StreamWatch

if TYPE_CHECKING:
    from .runtime import Runtime

class StreamSession(Protocol):
    """What a stream needs of its session (a ``Session`` is one): a GET stream may stay open for
    hours, and keeps this much rather than the whole record."""

    @property
    def id(self) -> str: ...

    @property
    def protocol_version(self) -> str | None: ...


class SessionView(NamedTuple):
    """The smallest ``StreamSession`` (56 bytes; a ``Session`` with its sets and dicts ~1 KB)."""

    id: str
    protocol_version: str | None


FIRST_EVENT_WAIT = 0.2  # a bad Last-Event-ID fails in the store's first step (memory: at once; Redis: 1 RTT)
RIDE_OUT_STEP = 0.25  # s between two tries of a store that went away, for a stream riding it out


async def serve_log(
    rt: Runtime,
    session: StreamSession,
    send: Send,
    receive: Receive,
    stream_id: str,
    after: str | None,
    on_tick: Callable[[], Awaitable[bool]] | None = None,
    fresh: bool = False,
    progress_gap: float = 0.0,
    ride_out: float = 0.0,
) -> None:
    """Stream a log of the session (the standalone stream, or a POST stream being resumed):
    events after ``after``, then live ones, until the ``end`` marker, a disconnect or the session
    ending. Raises the store's ``UnknownEvent`` before any byte is sent. ``fresh``: ``after`` is
    the position a new stream was just given (not a client's Last-Event-ID): it is the priming
    event's id for clients that get one. ``progress_gap``: seconds between a progress notification
    and the next response written after it (``legacy_sse``: see there why). ``ride_out``: seconds a
    stream whose client cannot resume it (HTTP+SSE) keeps its connection while its store is
    unavailable, reading on from its last event once the store is back, instead of ending."""
    events: AsyncIterator[Event] = rt.events.listen(session.id, stream_id, after)
    first: asyncio.Future[Event] | None = None
    if after is not None and not fresh:
        # Only a client's Last-Event-ID can name an unknown event; give the store's first step
        # the chance to say so before the 200 goes out (memory: at once; Redis: one round trip).
        # A fresh stream starts at a position just made: its pump takes the first event itself
        # (one task less per idle stream).
        first = asyncio.ensure_future(anext(events))
        done, _ = await asyncio.wait((first,), timeout=FIRST_EVENT_WAIT)
        if done and first.exception() is not None:
            with contextlib.suppress(Exception):
                await events.aclose()  # type: ignore[attr-defined]
            first.result()
    cfg = rt.config
    priming = sends_priming_event(session.protocol_version)
    retry_ms = cfg.retry_ms if priming else None
    writer = sse.SSEWriter(send)
    await writer.start()
    # Something at once: daphne (Twisted) sends the headers only with the first body bytes, and a
    # quiet stream would otherwise leave the client waiting for them until a keep-alive.
    if fresh and priming and after is not None:
        await writer.write(sse.priming(after, retry_ms))  # [11] transports.mdx "Resumability"
    else:
        await writer.write(sse.KEEPALIVE)
    ended = rt.register_stream(session.id)
    watch = StreamWatch(
        writer, receive, keepalive=cfg.keepalive, ended=ended, retry_ms=retry_ms, on_tick=on_tick
    )
    # The pump runs in this (the request's) task, not one of its own: one task less per idle
    # stream. The watch ends it by cancelling this task, told apart from the caller's cancel.
    me = asyncio.current_task()
    assert me is not None
    state = [True, False]  # pumping, stopped by the watch (a list: a dict is ~230 bytes)

    def watch_done(_: object) -> None:
        # The client left, the session ended, a check failed, the deadline came: stop pumping.
        if state[0]:
            state[1] = True
            me.cancel()

    watch.task.add_done_callback(watch_done)
    complete = False
    last: list[str | None] = [after]  # the last event read (a list: _pump moves it)
    try:
        try:
            while True:
                try:
                    await _pump(first, events, writer, progress_gap, last)
                    complete = True
                    break
                except StoreUnavailable:
                    if not ride_out:
                        raise
                    # The client cannot come back for what it missed (no Last-Event-ID in
                    # 2024-11-05 HTTP+SSE): keep its connection through a short outage and read on
                    # from its last event, which the store still has once it is back.
                    with contextlib.suppress(Exception):
                        await events.aclose()  # type: ignore[attr-defined]
                    await _ride_out(rt, session.id, ride_out)
                    events, first = rt.events.listen(session.id, stream_id, last[0]), None
        except asyncio.CancelledError:
            if not state[1] or me.uncancel() > 0:
                raise  # the caller's cancel, not (only) the watch's
        except StreamLagging:
            logger.info("ending a stream of session %s: its client fell behind", session.id)
        except Exception:  # the store failed (Redis gone): the client resumes (retry, below)
            logger.debug("a stream of session %s lost its store", session.id, exc_info=True)
    finally:
        state[0] = False
        if first is not None:
            first.cancel()
        await watch.stop()
        with contextlib.suppress(Exception):
            await events.aclose()  # type: ignore[attr-defined]
        rt.unregister_stream(session.id, ended)
        # Cut short (session ended, server closing, a reader too slow): tell the client to come
        # back and resume ([11] "Resumability"); a complete one (the end marker) just ends.
        await writer.close(None if complete else retry_ms)


async def _ride_out(rt: Runtime, session_id: str, seconds: float) -> None:
    """Returns once the store answers again (a read of the session: the stream's own check);
    ``StoreUnavailable`` if it does not within ``seconds``."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while True:
        await asyncio.sleep(RIDE_OUT_STEP)
        try:
            await rt.sessions.load(session_id)
            return
        except StoreUnavailable:
            if loop.time() >= deadline:
                raise


async def _pump(first: asyncio.Future[Event] | None, events: AsyncIterator[Event],
                writer: sse.SSEWriter, progress_gap: float = 0.0,
                last: list[str | None] | None = None) -> None:
    event = await first if first is not None else await anext(events)
    progressed = False  # a progress notification went out since the last response
    while True:
        if last is not None:
            last[0] = event.id
        message = event.message
        marker = message.get(MARKER)
        if marker == "end":
            return
        if progress_gap:
            if message.get("method") == "notifications/progress":
                progressed = True
            elif progressed and "id" in message and "method" not in message:
                progressed = False
                await asyncio.sleep(progress_gap)  # the response after its progress: see serve_log
        # ``data``: the store's JSON of the message, shared by every stream it reaches (a
        # fan-out's note is serialized once, not once per stream).
        data = event.data if event.data is not None else dumps(message)
        if marker is None and not await writer.write(sse.frame(data, event.id)):
            return
        event = await anext(events)
