"""The ASGI servers' own start and stop, for the process's ``RuntimeHost``: server-specific glue,
kept out of the protocol core (which knows an event loop, not who runs it).

- uvicorn sends the ASGI ``lifespan`` protocol (Channels' ``ProtocolTypeRouter`` passes it on):
  ``lifespan`` runs the host from ``lifespan.startup`` to ``lifespan.shutdown``. uvicorn waits
  for open responses to finish before it sends the shutdown, and an SSE stream never finishes by
  itself: ``hook_uvicorn_exit`` chains onto its SIGINT/SIGTERM handlers to end this worker's
  streams first (``transports/stopping.py``; the approach of sse-starlette).
- daphne sends no lifespan: ``start_under_daphne`` starts the host once Twisted's reactor (on
  asyncio) runs, and ``close_under_daphne`` stops it from a reactor "before shutdown" trigger, so
  background tasks and pools end cleanly.

``on_built`` is what the host calls with each runtime it builds (``service.build_service``).
"""

from __future__ import annotations

import asyncio
import signal
import sys
import threading
from typing import Any

from mcp_protocol.transports import stopping
from mcp_protocol.transports.host import RuntimeHost
from mcp_protocol.transports.responses import Receive, Scope, Send
from mcp_protocol.transports.runtime import Runtime

_daphne_scheduled: set[int] = set()  # the hosts whose start is scheduled on daphne's reactor


async def lifespan(host: RuntimeHost, scope: Scope, receive: Receive, send: Send) -> None:
    """The ASGI ``lifespan`` protocol: the runtime runs from ``lifespan.startup`` to
    ``lifespan.shutdown``, so the worker fans out changes before its first request."""
    message = await receive()
    if message["type"] != "lifespan.startup":
        return
    async with host.run():
        await send({"type": "lifespan.startup.complete"})
        while (await receive())["type"] != "lifespan.shutdown":
            pass
    await send({"type": "lifespan.shutdown.complete"})


def on_built(host: RuntimeHost, rt: Runtime) -> None:
    """A runtime was built for a loop: hook it to the stop of whichever server runs."""
    close_under_daphne(host, rt)
    hook_uvicorn_exit(host)


def start_under_daphne(host: RuntimeHost) -> None:
    """Daphne sends no ``lifespan``: run ``host.startup()`` once its reactor (on asyncio) runs."""
    if "daphne.server" not in sys.modules or id(host) in _daphne_scheduled:
        return
    try:
        from twisted.internet import reactor
    except ImportError:  # pragma: no cover
        return
    _daphne_scheduled.add(id(host))

    def when_running() -> None:
        # The reactor's loop, which may not be running yet when the startup trigger fires.
        host.spawn(host.startup(), asyncio.get_event_loop())

    twisted_reactor: Any = reactor
    twisted_reactor.callWhenRunning(when_running)


def close_under_daphne(host: RuntimeHost, rt: Runtime) -> None:
    """Daphne runs on Twisted's asyncio reactor and sends no lifespan events: stop the runtime
    from a "before shutdown" trigger so background tasks and pools end cleanly."""
    if "daphne.server" not in sys.modules:
        return
    try:
        from twisted.internet import defer, reactor
    except ImportError:  # pragma: no cover
        return

    def before_shutdown() -> Any:
        return defer.Deferred.fromFuture(asyncio.ensure_future(host.shutdown(), loop=rt.loop))

    twisted_reactor: Any = reactor
    twisted_reactor.addSystemEventTrigger("before", "shutdown", before_shutdown)


def hook_uvicorn_exit(host: RuntimeHost) -> None:
    """uvicorn waits for open responses to finish before it sends ``lifespan.shutdown``, and an
    SSE stream never finishes by itself: without this a SIGTERM would hang until killed. So
    chain onto uvicorn's SIGINT/SIGTERM handlers: end this worker's streams, then let uvicorn
    proceed. Signal handlers can only be set from the main thread."""
    if "uvicorn.server" not in sys.modules or threading.current_thread() is not threading.main_thread():
        return
    for signum in (signal.SIGINT, signal.SIGTERM):
        previous = signal.getsignal(signum)
        if not callable(previous) or getattr(previous, "_mcpsite_hook", False):
            continue

        def handler(number: int, frame: Any, previous: Any = previous) -> None:
            rt = host.built
            if rt is not None and not rt.loop.is_closed():
                rt.loop.call_soon_threadsafe(stopping.begin, rt)
            previous(number, frame)

        handler._mcpsite_hook = True  # type: ignore[attr-defined]
        signal.signal(signum, handler)
