"""tools/call in-process, three ways on one endpoint: a legacy session answered as JSON, the same
answered as an SSE stream (``always_stream``), and the stateless 2026-07-28 call.

    .venv/bin/python bench/bench_inprocess.py [--calls 5000] [--rounds 7]

The ASGI app is driven directly with a fake receive/send (no sockets, no HTTP server), memory
stores and the in-memory demo provider, as ``bench_routing.py`` does (``harness/inprocess.py``).
Each round times ``--calls`` calls of each kind back to back in this process's CPU time
(``time.process_time``, cyclic GC included: the finished POST-stream logs an SSE call leaves in
the memory event store are collected here too), and the fastest round of each is kept. ``--gc``
prints the collector's share (gc callbacks' wall time per call) as well; ``--only sse`` runs one
kind (under py-spy).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import gc
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mcpsite.settings")
os.environ["MCP_PROVIDER"] = "mcp_protocol.memory_provider.MemoryProvider"
os.environ.setdefault("MCP_LOG_LEVEL", "WARNING")
# The "open" row of run_all.py: no audit log, no metrics.
os.environ.setdefault("MCP_AUDIT", "0")
os.environ.setdefault("MCP_METRICS", "0")

from harness.inprocess import CALL, INITIALIZE, request  # noqa: E402

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
MODERN_HEADERS = [
    (b"host", b"127.0.0.1:8000"),
    (b"accept", b"application/json, text/event-stream"),
    (b"content-type", b"application/json"),
    (b"mcp-protocol-version", b"2026-07-28"),
    (b"mcp-method", b"tools/call"),
    (b"mcp-name", b"echo"),
]
MODERN_CALL = {**CALL, "params": {**CALL["params"], "_meta": META}}  # type: ignore[dict-item]


class GCClock:
    """Wall time spent in the cyclic collector, from ``gc.callbacks``."""

    def __init__(self) -> None:
        self.total = 0.0
        self._started = 0.0
        gc.callbacks.append(self._tick)

    def _tick(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.total += time.perf_counter() - self._started


async def modern_request(app: Any, body: bytes) -> list[dict[str, Any]]:
    return await request(app, body, base=MODERN_HEADERS)


async def main(calls: int, rounds: int, show_gc: bool, only: str | None = None) -> None:
    import django

    django.setup()
    from mcp_protocol.transports.http import MCPEndpoint
    from mcp_protocol.transports.runtime import get_runtime

    app = MCPEndpoint()
    rt = await get_runtime()
    json_config = rt.config
    sse_config = dataclasses.replace(json_config, always_stream=True)
    started = await request(app, json.dumps(INITIALIZE).encode())
    session = dict(started[0]["headers"])[b"mcp-session-id"]
    await request(app, b'{"jsonrpc":"2.0","method":"notifications/initialized"}', session)
    body, modern_body = json.dumps(CALL).encode(), json.dumps(MODERN_CALL).encode()

    async def legacy() -> list[dict[str, Any]]:
        return await request(app, body, session)

    async def modern() -> list[dict[str, Any]]:
        return await modern_request(app, modern_body)

    kinds = tuple(k for k in (("json", json_config, legacy), ("sse", sse_config, legacy),
                              ("stateless", json_config, modern)) if only is None or k[0] == only)
    for name, config, call in kinds:
        rt.config = config
        answer = await call()
        assert b'"text":"hi"' in b"".join(m.get("body", b"") for m in answer), (name, answer)
    best = {name: float("inf") for name, _, _ in kinds}
    gc_share = {name: float("inf") for name, _, _ in kinds}
    clock = GCClock()
    for _ in range(rounds):
        for name, config, call in kinds:
            rt.config = config
            clock.total = 0.0
            start = time.process_time()
            for _ in range(calls):
                await call()
            spent = (time.process_time() - start) / calls * 1e6
            if spent < best[name]:
                best[name], gc_share[name] = spent, clock.total / calls * 1e6
    rt.config = json_config
    print(f"tools/call in-process, CPU us per call, best of {rounds} rounds x {calls} calls:")
    for name, _, _ in kinds:
        extra = f"  (gc {gc_share[name]:.1f} us)" if show_gc else ""
        print(f"  {name:10} {best[name]:7.1f}{extra}")
    if only is None:
        print(f"  sse/json {best['json'] / best['sse']:.3f} (rate)   "
              f"stateless/legacy {best['json'] / best['stateless']:.3f} (rate)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--gc", action="store_true")
    parser.add_argument("--only", choices=("json", "sse", "stateless"), help="one kind (for py-spy)")
    args = parser.parse_args()
    asyncio.run(main(args.calls, args.rounds, args.gc, args.only))
