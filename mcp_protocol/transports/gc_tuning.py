"""The cyclic GC tuned for a worker that holds many long-lived streams, once per process.

A worker holds thousands of long-lived objects per open stream (10,000 GET streams: ~680,000
tracked objects), and CPython's full collection walks them all: ~300 ms each, ten of them in a
10,000-stream fan-out bench (py-spy: 23 % of a worker's CPU in ``gc_collect_main``;
bench/results/2026-11-24-fanout-10000-streams.md). So at startup (``RuntimeHost.startup``: the
ASGI lifespan, or
daphne's reactor start) what the process built so far (Django, the apps, the MCP runtime and its
snapshot) is frozen out of every collection, and young collections run every 50,000 allocations
instead of 700: a fan-out's short-lived objects die before they are promoted, and full
collections stay rare.

Applied by the host's ``on_started`` rather than in the project's ``asgi.py``, so that every
project that routes to ``mcp_path`` gets it (``mcp_django`` passes ``MCP["GC_THRESHOLD"]``);
``None`` leaves the process's GC as it is (a project that tunes its own).
"""

from __future__ import annotations

import gc
import logging
from collections.abc import Sequence

logger = logging.getLogger("mcp_protocol.runtime")

_applied = False


def apply(threshold: Sequence[int] | None) -> bool:
    """Freeze and set ``threshold`` (1 to 3 counts), once per process; False if it is None or empty."""
    global _applied
    if _applied or not threshold:
        return False
    _applied = True
    try:
        thresholds = [int(n) for n in threshold]
        if not 1 <= len(thresholds) <= 3 or min(thresholds) < 0:
            raise ValueError(threshold)
    except (TypeError, ValueError):
        # Not a reason to keep a worker from serving: reported, and the GC left as it is.
        logger.warning("MCP GC_THRESHOLD %r is not 1 to 3 counts: GC not tuned", threshold)
        return False
    gc.freeze()
    gc.set_threshold(*thresholds)
    logger.debug("GC: %d objects frozen, thresholds %s", gc.get_freeze_count(), gc.get_threshold())
    return True
