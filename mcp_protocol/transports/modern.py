"""One 2026-07-28 POST served: its header checks, and its response, JSON or SSE once the handler
sends a notification.

[26] basic/transports/streamable-http.mdx: no event ids, no priming, no resumption; notifications
relating to the request may precede the response; the server never sends requests on any stream
(sampling, elicitation and roots go through input-required results); and closing the response
stream MUST be treated as cancellation of the request.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from ..auth import principal as caller
from ..auth.scopes import view
from ..endpoint_views import select
from ..errors import ClientRequestError
from ..jsonrpc import Notification, Request, dumps, notification
from ..outbound import Outbound
from . import metrics, sse
from .headers import RequestHeaders, check_modern_headers, check_param_headers
from .responses import HTTPError, Receive, Scope, Send, modern_status, send_bytes, send_empty, send_error
from .watch import StreamWatch

if TYPE_CHECKING:
    from .runtime import Runtime

WATCH_AFTER = 0.25  # s


class ModernStream(Outbound):
    """A 2026-07-28 response: JSON, or SSE (no ids) once the handler sends a notification."""

    def __init__(self, rt: Runtime, send: Send, receive: Receive) -> None:
        self.rt, self.send, self.receive = rt, send, receive
        self.writer: sse.SSEWriter | None = None
        self.watch: StreamWatch | None = None
        self.task = asyncio.current_task()
        self.cancelled_by_client = False
        # A request still running after WATCH_AFTER s with nothing sent yet (JSON so far) is
        # watched for the client leaving too; a fast one never pays for a task.
        self._early: asyncio.Task[None] | None = None
        self._armed = rt.later.arm(WATCH_AFTER, self._watch_early)  # coarse: timer_wheel.py

    def _watch_early(self) -> None:
        if self.writer is None and self._early is None:
            self._early = asyncio.ensure_future(self._await_disconnect())

    async def _await_disconnect(self) -> None:
        while (await self.receive())["type"] != "http.disconnect":
            pass
        self._client_left()

    async def _stop_early(self) -> None:
        self.rt.later.disarm(self._armed, self._watch_early)
        early, self._early = self._early, None
        if early is not None and early is not asyncio.current_task():
            early.cancel()
            await asyncio.wait((early,))

    def _client_left(self) -> None:
        # [26] streamable-http.mdx: closing the response stream MUST be treated as cancellation.
        self.cancelled_by_client = True
        if self.task is not None:
            self.task.cancel()

    async def notify(self, method: str, params: dict[str, Any] | None) -> None:
        if self.writer is None:
            await self._stop_early()  # the stream's own watch reads receive() from now on
            self.writer = sse.SSEWriter(self.send)
            await self.writer.start()
            self.watch = StreamWatch(
                self.writer,
                self.receive,
                keepalive=self.rt.config.keepalive,
                ended=asyncio.Event(),
                retry_ms=None,
                on_disconnect=self._client_left,
            )
        await self.writer.write(sse.frame(dumps(notification(method, params))))

    async def request(
        self,
        method: str,
        params: dict[str, Any] | None,
        timeout: float,
    ) -> dict[str, Any]:
        # [26]: no server→client requests on any stream; the core uses input-required results.
        raise ClientRequestError(f"{method} cannot be sent in 2026-07-28: use an input-required result")

    async def finish(self, response: dict[str, Any] | None, status: int) -> None:
        await self._stop_early()
        if self.writer is None:
            if response is None:
                await send_empty(self.send, 202)
            else:
                await send_bytes(self.send, status, dumps(response))
            return
        if self.watch is not None:
            await self.watch.stop()
        if response is not None:
            await self.writer.write(sse.frame(dumps(response)))
        await self.writer.close()

    async def close(self) -> None:
        """Cleanup when the request ended without ``finish`` (cancelled, failed): idempotent."""
        await self._stop_early()
        if self.watch is not None:
            watch, self.watch = self.watch, None
            if watch.task is not asyncio.current_task():
                await watch.stop()
        if self.writer is not None:
            await self.writer.close()


async def serve_modern(
    rt: Runtime,
    scope: Scope,
    receive: Receive,
    send: Send,
    headers: RequestHeaders,
    message: Request | Notification,
) -> None:
    """2026-07-28: stateless; the Mcp-Session-Id header is ignored and never echoed."""
    try:
        check_modern_headers(headers, message)
        if message.method == "tools/call":
            served = select(rt.provider.snapshot(), rt.server.endpoint)  # this endpoint's tools only
            tool = view(served).tool(str((message.params or {}).get("name")))
            if tool is not None:
                check_param_headers(scope["headers"], message, tool.input_schema)
    except HTTPError as exc:
        await send_error(send, exc, message.id if isinstance(message, Request) else None)
        return
    stream = ModernStream(rt, send, receive)
    try:
        response = await rt.server.handle_stateless(message, stream, caller.current().id)
        scope[metrics.RESPONSE] = response
        await stream.finish(response, modern_status(response))
    except asyncio.CancelledError:
        task = asyncio.current_task()
        if stream.cancelled_by_client and task is not None:
            task.uncancel()
            return
        raise
    finally:
        await stream.close()
