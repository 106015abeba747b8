"""The stdio transport (basic/transports.mdx "stdio"): newline-delimited JSON-RPC on stdin/stdout.

One process, one client. stdout carries only protocol messages (the management command moves file
descriptor 1 to stderr for everything else); logs go to stderr. Each request runs in its own task
so a slow tool never blocks ``ping`` or ``notifications/cancelled``; ``initialize`` runs inline so
nothing overtakes it. EOF on stdin ends the connection: in-flight requests get a short grace
period, then are cancelled, and ``serve`` returns.

Both eras share the pipe, told apart per message (2026-07-28 versioning.mdx "dual-era"):

- A message whose ``params._meta`` names a protocol version is 2026-07-28: it goes to
  ``Server.handle_stateless`` with this connection's id, so ``notifications/cancelled`` (the only
  way to cancel on stdio: 2026-07-28 stdio.mdx "Cancellation") reaches it. There are no headers to
  check on stdio ("Request Metadata": all of it is inline). The server never writes a request to
  stdout in that era ("Receiving Messages": MUST NOT); sampling, elicitation and roots would need
  input-required results.
- Anything else is the legacy session (one per process). The transport owns its server→client
  requests: it numbers them, writes them to stdout and matches the client's responses itself.
  Definition changes published on the bus's ``changes`` channel refresh the provider and become
  the notifications ``fanout.notifications`` maps them to for the legacy session (once it is
  initialized: ``list_changed``, ``resources/updated`` of its subscriptions); 2026-07-28 requests
  on the pipe get them on ``subscriptions/listen`` (``changefeed.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import signal
import sys
import threading
from collections.abc import Callable
from typing import IO, Any

from .. import jsonrpc, versions
from ..bus.base import CHANGES, RESYNC, Bus
from ..changefeed import EVERYTHING
from ..errors import ClientRequestError, InvalidRequest, MCPError, ParseError
from ..fanout.notifications import Audience, Change, notifications
from ..jsonrpc import Notification, Request, RequestId, Response
from ..outbound import Outbound
from ..provider import Provider
from ..server import Server
from ..session import Session

logger = logging.getLogger("mcp_protocol.transports.stdio")

MAX_LINE_BYTES = 64 * 1024 * 1024
SHUTDOWN_GRACE = 5.0


class StdioOutbound(Outbound):
    """The legacy session's way back to the client: notifications and server→client requests."""

    def __init__(self, transport: StdioTransport) -> None:
        self._transport = transport

    async def notify(self, method: str, params: dict[str, Any] | None) -> None:
        self._transport.send(jsonrpc.notification(method, params))

    async def request(self, method: str, params: dict[str, Any] | None, timeout: float) -> dict[str, Any]:
        return await self._transport.client_request(method, params, timeout)


class StdioModernOutbound(StdioOutbound):
    """2026-07-28 on stdio: request-scoped notifications only, never a request."""

    async def request(self, method: str, params: dict[str, Any] | None, timeout: float) -> dict[str, Any]:
        # 2026-07-28 stdio.mdx "Receiving Messages": the server MUST NOT write JSON-RPC requests.
        raise ClientRequestError(f"{method} cannot be sent in 2026-07-28: use an input-required result")


class StdioTransport:
    def __init__(self, server: Server, write: Callable[[bytes], None]) -> None:
        self.server = server
        self.session = Session.create()
        self.outbound = StdioOutbound(self)
        self.modern_outbound = StdioModernOutbound(self)
        self._write = write
        self._write_lock = threading.Lock()
        self._ids = itertools.count(1)
        self._pending: dict[RequestId, asyncio.Future[Response]] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    # -- output ---------------------------------------------------------------------------------
    def send(self, message: Any) -> None:
        data = jsonrpc.dumps(message) + b"\n"  # dumps escapes newlines inside strings
        with self._write_lock:
            self._write(data)

    # -- server → client requests ---------------------------------------------------------------
    async def client_request(
        self, method: str, params: dict[str, Any] | None, wait_seconds: float
    ) -> dict[str, Any]:
        request_id = f"srv-{next(self._ids)}"
        future: asyncio.Future[Response] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        try:
            self.send(jsonrpc.request(request_id, method, params))
            async with asyncio.timeout(wait_seconds):
                response = await future
        except TimeoutError:
            # basic/utilities/cancellation.mdx: tell the client we no longer want the answer.
            self.send(
                jsonrpc.notification(
                    "notifications/cancelled", {"requestId": request_id, "reason": "timeout"}
                )
            )
            raise ClientRequestError(f"No response to {method} within {wait_seconds:g}s") from None
        except asyncio.CancelledError:
            self.send(jsonrpc.notification("notifications/cancelled", {"requestId": request_id}))
            raise
        finally:
            self._pending.pop(request_id, None)
        if response.error is not None:
            raise ClientRequestError(str(response.error.get("message") or f"{method} failed"), response.error)
        return response.result or {}

    def _resolve(self, response: Response) -> None:
        future = self._pending.get(response.id) if response.id is not None else None
        if future is None or future.done():
            logger.debug("Ignoring a response to unknown request %r", response.id)
            return
        future.set_result(response)

    # -- input ----------------------------------------------------------------------------------
    def _spawn(self, coro: Any) -> None:
        task: asyncio.Task[None] = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def feed_line(self, line: bytes) -> None:
        """Handle one line of input (a message or, for 2025-03-26 sessions, a batch)."""
        if not line.strip():
            return
        try:
            body = jsonrpc.parse_body(line)
        except (ParseError, InvalidRequest) as exc:
            self.send(jsonrpc.error_response(jsonrpc.error_id(exc), exc))
            return
        if isinstance(body, list):
            if not versions.allows_batch(self.session.protocol_version):
                self.send(
                    jsonrpc.error_response(None, InvalidRequest("Invalid Request: batches are not supported"))
                )
                return
            self._spawn(self._batch(body))
            return
        if isinstance(body, Response):
            self._resolve(body)
        elif isinstance(body, Request) and body.method != "initialize":
            self._spawn(self._request(body))
        else:
            await self._request(body)

    async def _answer(self, message: Request | Notification) -> dict[str, Any] | None:
        try:
            if self.server.is_modern_request(message):
                # Keyed by the legacy session's id: one client, one id space on this pipe.
                return await self.server.handle_stateless(
                    message, self.modern_outbound, connection=self.session.id
                )
            return await self.server.handle(message, self.session, self.outbound)
        except Exception:  # the Server already maps errors; this guards the transport itself
            logger.exception("Unhandled error serving %s", message.method)
            if isinstance(message, Request):
                return jsonrpc.error_response(message.id, MCPError())
            return None

    async def _request(self, message: Request | Notification) -> None:
        response = await self._answer(message)
        if response is not None:
            self.send(response)

    async def _batch(self, items: list[Any]) -> None:
        async def one(item: Any) -> dict[str, Any] | None:
            if isinstance(item, InvalidRequest):
                return jsonrpc.error_response(jsonrpc.error_id(item), item)
            if isinstance(item, Response):
                self._resolve(item)
                return None
            if isinstance(item, Request) and item.method == "initialize":
                # 2025-03-26 basic/lifecycle.mdx: initialize MUST NOT be part of a batch.
                return jsonrpc.error_response(item.id, InvalidRequest("initialize must not be batched"))
            return await self._answer(item)

        responses = [r for r in await asyncio.gather(*(one(i) for i in items)) if r is not None]
        if responses:
            self.send(responses)

    async def run(self, reader: asyncio.StreamReader) -> None:
        """Serve until EOF on ``reader``."""
        while True:
            try:
                line = await reader.readline()
            except ValueError:  # a line longer than the reader's limit
                self.send(jsonrpc.error_response(None, ParseError("Parse error: message too large")))
                continue
            if not line:
                break
            await self.feed_line(line)
        await self.shutdown()

    async def shutdown(self, grace: float = SHUTDOWN_GRACE) -> None:
        """Let in-flight requests finish for ``grace`` seconds, then cancel the rest."""
        pending = set(self._tasks)
        if pending and grace > 0:
            _, pending = await asyncio.wait(pending, timeout=grace)
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.wait(pending, timeout=SHUTDOWN_GRACE)
        self.session.state = "closed"

    # -- definition changes ---------------------------------------------------------------------
    async def on_change(self, provider: Provider, message: dict[str, Any]) -> None:
        await provider.refresh()
        # 2026-07-28 requests on this pipe: their subscriptions/listen streams (changefeed.py).
        self.server.feed.publish(EVERYTHING if message == RESYNC else message)
        audience = Audience.of_session(self.session)
        for method, params in notifications(Change.of(message), provider.capabilities, audience):
            self.send(jsonrpc.notification(method, params))

    async def watch(self, provider: Provider, bus: Bus, ready: asyncio.Event | None = None) -> None:
        subscription = await bus.subscribe(CHANGES)
        if ready is not None:
            ready.set()
        try:
            async for message in subscription:
                try:
                    await self.on_change(provider, message)
                except Exception:
                    logger.exception("Could not apply a definition change")
        finally:
            await subscription.close()


async def _stdin_reader() -> asyncio.StreamReader:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=MAX_LINE_BYTES)
    try:
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    except ValueError:
        # A regular file on stdin cannot be a pipe transport: read it in a thread instead.
        def pump() -> None:
            for line in sys.stdin.buffer:
                loop.call_soon_threadsafe(reader.feed_data, line)
            loop.call_soon_threadsafe(reader.feed_eof)

        threading.Thread(target=pump, name="mcp-stdin", daemon=True).start()
    return reader


async def serve(server: Server, provider: Provider, out: IO[bytes], bus: Bus | None = None) -> None:
    """Serve one client on this process's stdin and ``out`` until stdin reaches EOF."""

    def write(data: bytes) -> None:
        out.write(data)
        out.flush()

    transport = StdioTransport(server, write)
    watcher: asyncio.Task[None] | None = None
    if bus is not None:
        ready = asyncio.Event()
        watcher = asyncio.create_task(transport.watch(provider, bus, ready))
        # Subscribed before the first refresh, so no change can slip between the two.
        waiter = asyncio.ensure_future(ready.wait())
        await asyncio.wait({watcher, waiter}, return_when=asyncio.FIRST_COMPLETED)
        waiter.cancel()
        if watcher.done():
            watcher.result()  # subscribing failed: fail loudly rather than serve stale lists
    await provider.refresh()
    # What serving on this loop needs (the registry's pooled HTTP client), and changes the bus
    # never carried, published on it (provider.py).
    await provider.start(bus)
    reader = await _stdin_reader()
    loop = asyncio.get_running_loop()
    main = asyncio.current_task()
    with contextlib.suppress(NotImplementedError, RuntimeError):
        # The stdio shutdown sequence (basic/lifecycle.mdx "Shutdown") ends with SIGTERM when
        # closing stdin was not enough: stop at once but still exit cleanly (status 0).
        loop.add_signal_handler(signal.SIGTERM, lambda: main.cancel() if main is not None else None)
    try:
        await transport.run(reader)
    except asyncio.CancelledError:
        if main is None or main.cancelling() == 0:
            raise
        main.uncancel()
        await transport.shutdown(grace=0)
    finally:
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.remove_signal_handler(signal.SIGTERM)
        if watcher is not None:
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await watcher
        with contextlib.suppress(Exception):
            await provider.stop()
