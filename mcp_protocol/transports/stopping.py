"""A worker told to stop (SIGTERM) ends its work in bounded time and leaves nobody waiting.

At once: every open SSE response ends with ``retry`` (``Runtime.end_all_streams``), so clients
resume on another worker; a POST stream's handler keeps running here meanwhile and its events
keep going to the log, where the resumed stream reads them. Requests in flight get
``SHUTDOWN_GRACE_SECONDS`` to finish; then each one still running is answered with the
``WorkerStopped`` error (-32603, "may be retried": ``Server.stop_all``): a JSON-mode request on
its open response, a streamed one in its log, where the client's resumed stream reads it. Task runs get
the same grace, from the same instant (``tasks/drain.py``). Then
the server (uvicorn) can finish its shutdown instead of waiting for handlers that may never end.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .runtime import Runtime

logger = logging.getLogger("mcp_protocol.runtime")

_stopping: set[asyncio.Task[int]] = set()  # strong references to the stop tasks


def begin(rt: Runtime) -> None:
    """Called on the runtime's loop when the server was told to stop."""
    rt.stopping = True
    rt.end_all_streams()
    if rt.server.tasks is not None:
        rt.server.tasks.drain.begin(rt.config.shutdown_grace)  # the same grace, from now
    task = rt.loop.create_task(stop_requests(rt, rt.config.shutdown_grace))
    _stopping.add(task)
    task.add_done_callback(_stopping.discard)


async def stop_requests(rt: Runtime, grace: float) -> int:
    """Let in-flight requests finish for ``grace`` seconds, then answer the rest with the error."""
    running = rt.server.running()
    if running:
        await asyncio.wait(running, timeout=grace)
    stopped = rt.server.stop_all()
    if stopped:
        logger.warning("stopping: %d request(s) still running after %.0f s answered with an error",
                       stopped, grace)
    return stopped
