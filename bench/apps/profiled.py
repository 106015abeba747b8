"""An ASGI app that runs another under ``cProfile`` for a window of requests: what
``profile_served.py --tool cprofile`` serves.

``PROFILE_APP`` names the app (``module:attribute``), ``PROFILE_OUT`` the stats file. The profiler
is enabled at the ``PROFILE_FROM``-th HTTP request (warm caches, imports done) and its stats are
written at the ``PROFILE_TO``-th, so the file holds exactly ``PROFILE_TO - PROFILE_FROM``
requests (per-request figures divide by that) and everything the event loop ran in between:
uvicorn's own code included, which is what tells the served cost from the in-process one.
"""

from __future__ import annotations

import cProfile
import importlib
import os
from typing import Any

_module, _, _attribute = os.environ["PROFILE_APP"].partition(":")
inner = getattr(importlib.import_module(_module), _attribute)
OUT = os.environ["PROFILE_OUT"]
FROM = int(os.environ.get("PROFILE_FROM", "1000"))
TO = int(os.environ.get("PROFILE_TO", "6000"))

_profiler = cProfile.Profile()
_seen = 0


async def application(scope: dict[str, Any], receive: Any, send: Any) -> None:
    global _seen
    if scope["type"] == "http":
        _seen += 1
        if _seen == FROM:
            _profiler.enable()
        elif _seen == TO:
            _profiler.disable()
            _profiler.dump_stats(OUT)
    await inner(scope, receive, send)
