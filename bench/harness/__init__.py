"""The bench's library: what the entry scripts of ``bench/`` share, and nothing they run by
themselves.

- ``loadgen``: the closed-loop load generator (scenarios, ``run_scenario``, ``Result``);
- ``httpclient``: the HTTP/1.1 clients it drives (a raw keep-alive connection, httpx) and the
  bearer-token wrapper;
- ``servers``: the server launchers (ours through ``tests/support/live_server.py``, the SDK peer),
  the bench database, a process's CPU time;
- ``drain``: the audit spool's drain process beside a keyed server;
- ``recording``: our answers recorded for the bare reference app to send back;
- ``inprocess``: one request straight into an ASGI app (no sockets), for CPU per call;
- ``streams``: many GET streams held open over raw sockets (fan-out, memory per stream);
- ``redis_stats``: what a private Redis or Cluster did over a window (INFO deltas, its CPU);
- ``jwks``: a JWKS on loopback for the RS256 tokens a bench signs.

Entry scripts run as ``python bench/<script>.py`` have ``bench/`` first on ``sys.path``, so they
import this package as ``harness``; importing it puts the repository root on ``sys.path`` too (for
``mcpsite``, ``mcp_protocol`` and ``tests.support``).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
