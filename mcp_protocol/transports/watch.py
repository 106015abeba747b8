"""What runs beside an open SSE response, whatever its kind (POST stream, GET stream, resume,
2026-07-28 response): notices the client leaving, sends keep-alive comments, closes early when
asked (SEP-1699 polling) and closes when the session ends. It writes only comments and the
closing ``retry``; the events are the stream owner's."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

from . import sse
from .responses import Receive


class StreamWatch:
    """Runs beside an open SSE response: notices the client leaving, sends keep-alive comments,
    closes early when asked (SEP-1699 polling), and closes when the session ends."""

    def __init__(
        self,
        writer: sse.SSEWriter,
        receive: Receive,
        *,
        keepalive: float,
        ended: asyncio.Event,
        retry_ms: int | None,
        close_after: float | None = None,
        on_tick: Callable[[], Awaitable[bool]] | None = None,
        on_disconnect: Callable[[], None] | None = None,
        start_after: float = 0.0,
    ) -> None:
        self.writer, self.receive, self.keepalive, self.ended = writer, receive, keepalive, ended
        self.retry_ms, self.close_after, self.on_tick, self.on_disconnect = (
            retry_ms,
            close_after,
            on_tick,
            on_disconnect,
        )
        self._task: asyncio.Task[None] | None = None
        self._timer: asyncio.TimerHandle | None = None
        now = asyncio.get_running_loop().time()
        # From now, however late the task starts (SEP-1699: close after close_after seconds).
        self.deadline = None if close_after is None else now + close_after
        if close_after is not None:
            start_after = min(start_after, close_after)
        if start_after > 0:
            # A response that ends sooner (most POST streams) never pays for the watch's tasks: a
            # client leaving meanwhile only fails a write, and a DELETE in that window is acted on
            # once the watch starts.
            self._timer = asyncio.get_running_loop().call_later(start_after, self._start)
        else:
            self._start()

    def _start(self) -> None:
        self._timer = None
        if self._task is None:
            self._task = asyncio.create_task(self._run())

    @property
    def task(self) -> asyncio.Task[None]:
        """The watch's task (started now if it was still waiting for ``start_after``)."""
        self._start()
        assert self._task is not None
        return self._task

    async def _disconnected(self) -> None:
        while (await self.receive())["type"] != "http.disconnect":
            pass

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        gone = asyncio.ensure_future(self._disconnected())
        ended = asyncio.ensure_future(self.ended.wait())
        deadline = self.deadline
        try:
            # Whatever the owner held back for its next write (a priming event) goes out now:
            # nothing followed it soon enough.
            await self.writer.flush()
            while not self.writer.closed:
                timeout = self.keepalive
                if deadline is not None:
                    timeout = max(0.0, min(timeout, deadline - loop.time()))
                done, _ = await asyncio.wait(
                    (gone, ended), timeout=timeout, return_when=asyncio.FIRST_COMPLETED
                )
                if gone in done:
                    self.writer.detach()
                    if self.on_disconnect is not None:
                        self.on_disconnect()
                    return
                if ended in done or (deadline is not None and loop.time() >= deadline):
                    await self.writer.close(self.retry_ms)
                    return
                if self.on_tick is not None and not await self.on_tick():
                    await self.writer.close(self.retry_ms)
                    return
                await self.writer.write(sse.KEEPALIVE)
        finally:
            gone.cancel()
            ended.cancel()

    async def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        task, self._task = self._task, None
        if task is None:
            return
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
