"""What runs beside an open SSE response, whatever its kind (POST stream, GET stream, resume,
2026-07-28 response): notices the client leaving, sends keep-alive comments, closes early when
asked (SEP-1699 polling) and closes when the session ends. It writes only comments and the
closing ``retry``; the events are the stream owner's.

Per stream it costs one task (the one waiting for the client's disconnect, which only ASGI's
``receive()`` tells) and no timer: the keep-alives and ``on_tick`` checks of every stream of a
loop with the same period are run by one ``Ticker`` task, in batches, and the session's end
(``EndSignal``) calls back instead of being awaited. 10,000 idle GET streams used to hold
30,000 tasks and 10,000 timers for this, re-armed at every keep-alive.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import weakref
from collections import deque
from collections.abc import Awaitable, Callable
from typing import ClassVar

from . import sse
from .responses import Receive

logger = logging.getLogger("mcp_protocol.transports")


class EndSignal:
    """The end of a stream's session: ``set()`` calls back every stream's watch (no task waits
    on it) and wakes ``wait()``. Not an ``asyncio.Event``: that holds a deque (~370 bytes) per
    idle stream."""

    __slots__ = ("_callbacks", "_set")

    def __init__(self) -> None:
        self._set = False
        self._callbacks: list[Callable[[], None]] | None = None

    def is_set(self) -> bool:
        return self._set

    def add_callback(self, callback: Callable[[], None]) -> None:
        if self._set:
            callback()
            return
        if self._callbacks is None:
            self._callbacks = []
        self._callbacks.append(callback)

    def remove_callback(self, callback: Callable[[], None]) -> None:
        if self._callbacks is not None:
            with contextlib.suppress(ValueError):
                self._callbacks.remove(callback)

    def set(self) -> None:
        self._set = True
        callbacks, self._callbacks = self._callbacks or [], None
        for callback in callbacks:
            callback()

    async def wait(self) -> bool:
        if not self._set:
            done: asyncio.Future[None] = asyncio.get_running_loop().create_future()

            def wake() -> None:
                if not done.done():
                    done.set_result(None)

            self.add_callback(wake)
            try:
                await done
            finally:
                self.remove_callback(wake)
        return True


class Ticker:
    """Every ``StreamWatch`` of one loop with one keep-alive period, ticked by one task: watches
    are queued by due time (all share the period, so appending keeps the queue sorted); those due
    within ``slack`` of each other tick together, each tick in a task of its own so a slow
    ``on_tick`` holds up no other stream."""

    _of: ClassVar[weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[float, Ticker]]] = (
        weakref.WeakKeyDictionary())

    def __init__(self, period: float) -> None:
        self.period = period
        self.slack = min(0.05, period / 10)
        self.queue: deque[tuple[float, StreamWatch]] = deque()
        self.task: asyncio.Task[None] | None = None

    @classmethod
    def of(cls, period: float) -> Ticker:
        tickers = cls._of.setdefault(asyncio.get_running_loop(), {})
        ticker = tickers.get(period)
        if ticker is None:
            ticker = tickers[period] = cls(period)
        return ticker

    def add(self, watch: StreamWatch) -> None:
        loop = asyncio.get_running_loop()
        self.queue.append((loop.time() + self.period, watch))
        if self.task is None or self.task.done():
            self.task = loop.create_task(self._run(), name="mcp-stream-ticker")

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while self.queue:
            delay = self.queue[0][0] - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
            now = loop.time()
            batch = []
            while self.queue and self.queue[0][0] <= now + self.slack:
                _, watch = self.queue.popleft()
                if watch.active:  # stopped watches leave the queue here, at their turn
                    batch.append(watch)
                    self.queue.append((now + self.period, watch))
            for watch in batch:
                watch.tick()


class StreamWatch:
    """Runs beside an open SSE response: notices the client leaving, sends keep-alive comments,
    closes early when asked (SEP-1699 polling), and closes when the session ends."""

    __slots__ = ("_closing", "_deadline", "_ended_waiter", "_ticking", "active", "close_after",
                 "ended", "keepalive", "on_disconnect", "on_tick", "receive", "retry_ms", "task",
                 "writer")

    def __init__(
        self,
        writer: sse.SSEWriter,
        receive: Receive,
        *,
        keepalive: float,
        ended: EndSignal | asyncio.Event,
        retry_ms: int | None,
        close_after: float | None = None,
        on_tick: Callable[[], Awaitable[bool]] | None = None,
        on_disconnect: Callable[[], None] | None = None,
    ) -> None:
        self.writer, self.receive, self.keepalive, self.ended = writer, receive, keepalive, ended
        self.retry_ms, self.close_after, self.on_tick, self.on_disconnect = (
            retry_ms,
            close_after,
            on_tick,
            on_disconnect,
        )
        self.active = True
        self._ticking: asyncio.Task[None] | None = None
        self._closing: asyncio.Task[None] | None = None
        self._deadline: asyncio.TimerHandle | None = None
        self._ended_waiter: asyncio.Task[bool] | None = None
        self.task: asyncio.Task[None] = asyncio.create_task(self._run())
        loop = asyncio.get_running_loop()
        if close_after is not None:
            self._deadline = loop.call_later(max(0.0, close_after), self._finish)
        if isinstance(ended, EndSignal):
            ended.add_callback(self._finish)
        else:  # a plain Event (a stream no session can end): waited for the old way
            self._ended_waiter = asyncio.ensure_future(ended.wait())
            self._ended_waiter.add_done_callback(lambda _: self._finish())
        Ticker.of(keepalive).add(self)

    async def _run(self) -> None:
        try:
            while (await self.receive())["type"] != "http.disconnect":
                pass
        finally:
            self._release()
        self.writer.detach()
        if self.on_disconnect is not None:
            self.on_disconnect()

    def tick(self) -> None:
        """Called by the ``Ticker`` once per period: check, then a keep-alive comment."""
        if self.writer.closed or self.task.done():
            self._release()
        elif self._ticking is None or self._ticking.done():
            self._ticking = asyncio.ensure_future(self._tick())

    async def _tick(self) -> None:
        try:
            if self.on_tick is not None and not await self.on_tick():
                self._finish()
                return
        except Exception:
            # Its store is unreachable, say: close with retry, the client resumes elsewhere.
            logger.warning("a stream's periodic check failed; closing it", exc_info=True)
            self._finish()
            return
        await self.writer.write(sse.KEEPALIVE)

    def _finish(self) -> None:
        """Session ended, deadline reached or a tick said so: close with ``retry`` and end."""
        if self.active and self._closing is None and not self.task.done():
            self._closing = asyncio.ensure_future(self._close())

    async def _close(self) -> None:
        await self.writer.close(self.retry_ms)
        self.task.cancel()

    def _release(self) -> None:
        self.active = False
        if self._deadline is not None:
            self._deadline.cancel()
        if isinstance(self.ended, EndSignal):
            self.ended.remove_callback(self._finish)
        if self._ended_waiter is not None:
            self._ended_waiter.cancel()

    async def stop(self) -> None:
        self._release()
        self.task.cancel()
        for task in (self.task, self._ticking, self._closing):
            if task is not None and task is not asyncio.current_task():
                if task is not self.task:
                    task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
