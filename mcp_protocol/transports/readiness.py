"""Workers ready before they serve: the runtime is built and subscribed to the bus at startup.

A worker used to build its runtime (provider snapshot, ``changes`` subscription, fan-out) on its
first ``/mcp`` request. Until then it heard no change: with one worker writing a change's
notifications and every other worker waiting for it (``fanout/``), a client that resumed its
stream on a worker that had served nothing lost whatever was published before that worker woke.
So the runtime starts at process startup instead:

- ``startup()`` is what the ASGI ``lifespan.startup`` runs (uvicorn sends it; Channels'
  ``ProtocolTypeRouter`` passes it to ``routing.lifespan``). Daphne sends no lifespan: there,
  ``start_under_daphne()`` (called when the routing module is imported) schedules the same start
  for when Twisted's reactor runs.
- A start that fails (Redis down at boot) does not stop the process: the worker is not ready, and
  keeps retrying in the background (``RETRY_MIN`` doubling to ``RETRY_MAX``) until it is; a request
  meanwhile retries the start itself, as before.
- ``ready()`` is the readiness answer (``/readyz``): this loop's runtime is started and its
  ``changes`` subscription is being read.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from typing import Any

from . import gc_tuning, runtime

logger = logging.getLogger("mcp_protocol.runtime")

RETRY_MIN = 0.2  # s: first pause before retrying a failed start
RETRY_MAX = 5.0  # s: longest pause between retries
_retrying: set[asyncio.Task[None]] = set()  # strong references: a bare task may be collected


async def startup() -> None:
    """Start this loop's runtime now; on failure, log and keep retrying in the background."""
    try:
        await runtime.get_runtime()
        logger.info("MCP runtime started: subscribed to the bus")
        gc_tuning.apply()  # after the start: the runtime's long-lived objects are frozen too
    except Exception as exc:
        logger.warning("MCP runtime could not start (%s); retrying in the background: not ready", exc)
        task = asyncio.get_running_loop().create_task(_retry())
        _retrying.add(task)
        task.add_done_callback(_retrying.discard)


async def _retry() -> None:
    pause = RETRY_MIN
    while True:
        await asyncio.sleep(pause)
        try:
            await runtime.get_runtime()
        except Exception as exc:
            logger.debug("MCP runtime start failed again: %s", exc)
            pause = min(pause * 2, RETRY_MAX)
            continue
        logger.info("MCP runtime started after a retry: subscribed to the bus")
        gc_tuning.apply()
        return


def ready() -> bool:
    """Started and subscribed: the runtime of the running loop listens to ``changes``."""
    rt = runtime.current()
    return rt is not None and rt.fanout.listening


def start_under_daphne() -> None:
    """Daphne sends no ``lifespan``: run ``startup()`` once its reactor (on asyncio) runs."""
    if "daphne.server" not in sys.modules:
        return
    try:
        from twisted.internet import reactor
    except ImportError:  # pragma: no cover
        return

    def when_running() -> None:
        task = asyncio.get_event_loop().create_task(startup())
        _retrying.add(task)
        task.add_done_callback(_retrying.discard)

    twisted_reactor: Any = reactor
    twisted_reactor.callWhenRunning(when_running)
