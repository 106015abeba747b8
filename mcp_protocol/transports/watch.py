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
    ) -> None:
        self.writer, self.receive, self.keepalive, self.ended = writer, receive, keepalive, ended
        self.retry_ms, self.close_after, self.on_tick, self.on_disconnect = (
            retry_ms,
            close_after,
            on_tick,
            on_disconnect,
        )
        self.task: asyncio.Task[None] = asyncio.create_task(self._run())

    async def _disconnected(self) -> None:
        while (await self.receive())["type"] != "http.disconnect":
            pass

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        gone = asyncio.ensure_future(self._disconnected())
        ended = asyncio.ensure_future(self.ended.wait())
        deadline = None if self.close_after is None else loop.time() + self.close_after
        try:
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
        self.task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self.task
