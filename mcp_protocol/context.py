"""What a tool, resource or prompt implementation gets: who is asking, and ways to talk back.

A ``Context`` is built by the core for each request. It reports progress (only when the request
carried ``_meta.progressToken``: basic/utilities/progress.mdx), sends log messages filtered by the
session's level (server/utilities/logging.mdx), exposes cancellation, and makes server→client
requests (sampling, elicitation, roots) through the transport's ``Outbound`` after checking the
client declared the capability ([06+] lifecycle.mdx: only use negotiated capabilities); in a
2026-07-28 request the same calls become input-required results (``inputs.py``).

The core calls ``finish()`` once the request has been answered (or cancelled): from then on
progress and log notifications are dropped and server→client requests refused, so a task a
handler leaked cannot talk about a request the client already considers done
(basic/utilities/progress.mdx: notifications MUST stop after completion).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from . import versions
from .errors import ClientRequestError, InvalidParams, MissingClientCapability, RequestCancelled
from .inputs import InputRound
from .outbound import Outbound
from .session import Session

# RFC 5424 severities, lowest first (server/utilities/logging.mdx "Log Levels").
LOG_LEVELS: tuple[str, ...] = (
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
)
_LEVEL_RANK = {name: rank for rank, name in enumerate(LOG_LEVELS)}

DEFAULT_CLIENT_REQUEST_TIMEOUT = 60.0


def level_rank(level: str) -> int:
    try:
        return _LEVEL_RANK[level]
    except KeyError:
        raise InvalidParams(f"Unknown log level: {level!r}", {"levels": list(LOG_LEVELS)}) from None


class Context:
    def __init__(
        self,
        *,
        session: Session,
        outbound: Outbound,
        request_id: str | int | None = None,
        progress_token: str | int | None = None,
        principal: str | None = None,
        client_request_timeout: float = DEFAULT_CLIENT_REQUEST_TIMEOUT,
        inputs: InputRound | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> None:
        self.session = session
        # The request's params._meta as the client sent it (read it, never change it): context a
        # provider may forward, such as W3C trace context (SEP-414 puts "traceparent" at its root).
        self.meta: Mapping[str, Any] = meta if meta is not None else {}
        # Modern requests that may answer input-required: questions go there (inputs.py).
        self.inputs = inputs
        self.outbound = outbound
        self.request_id = request_id
        self.progress_token = progress_token
        self.principal = principal if principal is not None else session.principal
        self.client_request_timeout = client_request_timeout
        self.cancel_event = asyncio.Event()
        # Set by the task runner when this call may become a task (tasks/runner.py).
        self.on_detach: Callable[[], None] | None = None
        # A run of a task (tasks/call.py): a provider may run its own work as a task too (an
        # upstream MCP server's task, registry/upstreams/tasks.py).
        self.task_run = False
        # Set by the task runner once the run's task exists: notes its status message (store).
        self.on_status: Callable[[str], Awaitable[None]] | None = None
        self._last_progress: float | None = None
        self._finished = False

    # -- who is asking -------------------------------------------------------------------------
    @property
    def protocol_version(self) -> str | None:
        return self.session.protocol_version

    @property
    def client_capabilities(self) -> dict[str, Any]:
        return self.session.client_capabilities

    # -- cancellation --------------------------------------------------------------------------
    @property
    def cancelled(self) -> bool:
        return self.cancel_event.is_set()

    def check_cancelled(self) -> None:
        if self.cancel_event.is_set():
            raise RequestCancelled()

    # -- completion ----------------------------------------------------------------------------
    @property
    def finished(self) -> bool:
        return self._finished

    def finish(self) -> None:
        """Called by the core when the request is over (answered, failed or cancelled)."""
        self._finished = True

    # -- tasks ---------------------------------------------------------------------------------
    async def run_as_task(self) -> None:
        """Go on as a task from here, if this call may be one (a task-capable tool, a client of
        the tasks extension): the questions asked so far were answered in the request (MRTR,
        SEP-2663 "Composition with Multi Round-Trip Requests"), the client gets the task now,
        and later questions become the task's input requests. Elsewhere a no-op."""
        if self.on_detach is not None:
            self.on_detach()
            await asyncio.sleep(0)  # let the server answer with the task before going on

    async def report_task_status(self, message: str) -> None:
        """Where this task's run is, in words: its task's ``statusMessage`` (2025-11-25
        basic/utilities/tasks.mdx, "the current task state"), read by ``tasks/get`` on any worker.
        A no-op outside a task's run, and before its task exists."""
        if self.on_status is not None:
            await self.on_status(message)

    # -- notifications -------------------------------------------------------------------------
    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Send ``notifications/progress``; a no-op without a progress token. ``progress`` must
        increase with each call (basic/utilities/progress.mdx), so a non-increasing value is dropped,
        as is any call once the request is finished or cancelled (they MUST stop after completion)."""
        if self.progress_token is None or self.cancelled or self._finished:
            return
        if self._last_progress is not None and progress <= self._last_progress:
            return
        self._last_progress = progress
        params: dict[str, Any] = {"progressToken": self.progress_token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None and versions.has_progress_message(self.protocol_version):
            params["message"] = message
        await self.outbound.notify("notifications/progress", params)

    async def log(self, level: str, data: Any, logger: str | None = None) -> None:
        """Send ``notifications/message`` if ``level`` is at or above the session's level; dropped
        once the request is finished (nothing may follow its response on a request's stream)."""
        rank = level_rank(level)
        if self._finished:
            return
        threshold = self.session.log_level
        if threshold is not None and rank < level_rank(threshold):
            return
        if self.session.stateless and threshold is None:
            # 2026-07-28 server/utilities/logging.mdx: no notifications/message for a request
            # without _meta["io.modelcontextprotocol/logLevel"].
            return
        params: dict[str, Any] = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        await self.outbound.notify("notifications/message", params)

    async def elicitation_complete(self, elicitation_id: str) -> None:
        """Send ``notifications/elicitation/complete``: the out-of-band step a URL-mode elicitation
        asked for is done (2025-11-25 client/elicitation.mdx "Completion Notifications for URL Mode
        Elicitation": servers MAY send it; it names the ``elicitationId`` of the request). Only in
        a session whose elicitation carried that id (2025-11-25: a 2026-07-28 retry has nothing
        to correlate), only while the request is open, never from a task's replayed run."""
        if self._finished or self.inputs is not None or self.session.stateless:
            return
        await self.outbound.notify("notifications/elicitation/complete", {"elicitationId": elicitation_id})

    async def close_stream(self) -> None:
        """Let a long-running handler hand the client back to polling (SEP-1699): the transport
        closes the response stream after a ``retry`` hint; the client resumes it by GET with
        ``Last-Event-ID``. A no-op where the transport cannot resume."""
        await self.outbound.close_stream()

    # -- server → client requests --------------------------------------------------------------
    async def request(
        self, method: str, params: dict[str, Any] | None, capability: str, *, key: str | None = None
    ) -> dict[str, Any]:
        """Ask the client (sampling, elicitation, roots) and return its result, in either era.

        Legacy: a server→client request on the request's stream. Modern (2026-07-28), and a
        task's run in either era: by replay (``inputs.py``): the answer under ``key`` if the
        retry carries it, else the run is parked and the client is asked for it (an input-required
        result, the task's input requests). ``key`` names the question in ``inputRequests``
        (default ``<kind>-<n>``, in the order asked).
        """
        if self._finished:
            # Server→client requests relate to the originating request ([L] transports.mdx);
            # once it has been answered there is nothing left for the client's reply to feed.
            raise ClientRequestError(f"{method} cannot be sent: the request has already completed")
        if capability not in self.client_capabilities:
            if self.session.stateless:
                # 2026-07-28 basic/index.mdx: a needed capability the client did not declare →
                # MissingRequiredClientCapabilityError, data.requiredCapabilities a ClientCapabilities.
                raise MissingClientCapability(
                    f"This request needs the client capability {capability!r} ({method})",
                    {"requiredCapabilities": {capability: {}}},
                )
            raise ClientRequestError(
                f"The client did not declare the {capability!r} capability needed for {method}"
            )
        if self.inputs is not None:
            # A modern request, or a task's run in either era (its questions are parked in the
            # task store and answered by tasks/update or over a tasks/result stream).
            return await self.inputs.ask(method, params, key)
        if self.session.stateless:
            # mrtr.mdx "Supported Requests": only tools/call, resources/read, prompts/get.
            raise ClientRequestError(f"{method} cannot be asked while serving this method")
        return await self.outbound.request(method, params, self.client_request_timeout)

    async def sample(self, params: dict[str, Any], *, key: str | None = None) -> dict[str, Any]:
        """``sampling/createMessage`` (client/sampling.mdx)."""
        return await self.request("sampling/createMessage", params, "sampling", key=key)

    async def elicit(self, params: dict[str, Any], *, key: str | None = None) -> dict[str, Any]:
        """``elicitation/create`` ([06+] client/elicitation.mdx)."""
        return await self.request("elicitation/create", params, "elicitation", key=key)

    async def list_roots(self, *, key: str | None = None) -> dict[str, Any]:
        """``roots/list`` (client/roots.mdx)."""
        return await self.request("roots/list", None, "roots", key=key)
