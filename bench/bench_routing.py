"""What routing ``/mcp`` through Channels costs: tools/call in-process, through
``mcpsite.asgi.router`` (``ProtocolTypeRouter`` → ``URLRouter`` → the endpoint, as a project that
embeds mcpsite routes it, and as ``mcpsite.asgi:application`` does under a ``root_path``) and
through a direct dispatch (``bench/apps/direct.py``; ``mcpsite.asgi:application``'s
``EndpointFirst`` does the same), interleaved in one run.

    .venv/bin/python bench/bench_routing.py [--calls 3000] [--rounds 15]

In-process on purpose: over loopback (``bench.py --routing``) the HTTP server and the client take
most of the CPU and a busy 2-core machine moves the rate by ±30 % between rounds, which hides a
few microseconds. Here each round times ``--calls`` calls of each app back to back in this
process's CPU time (what other processes' load moves least), and the fastest round of each is
kept. Memory stores, the
in-memory demo provider, JSON responses; no sockets.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mcpsite.settings")
os.environ["MCP_PROVIDER"] = "mcp_protocol.memory_provider.MemoryProvider"
os.environ.setdefault("MCP_LOG_LEVEL", "WARNING")

from harness.inprocess import CALL, INITIALIZE, request  # noqa: E402


async def main(calls: int, rounds: int) -> None:
    import django

    django.setup()
    from apps.direct import application as direct  # bench/ is sys.path[0] (bench.py shadows bench.*)

    from mcpsite.asgi import router as routed

    started = await request(direct, json.dumps(INITIALIZE).encode())
    session = dict(started[0]["headers"])[b"mcp-session-id"]
    await request(direct, b'{"jsonrpc":"2.0","method":"notifications/initialized"}', session)
    body = json.dumps(CALL).encode()
    for app in (routed, direct):
        answer = await request(app, body, session)
        assert b'"text":"hi"' in answer[-1]["body"], answer
    best = {"channels": float("inf"), "direct": float("inf")}
    for _ in range(rounds):
        for name, app in (("channels", routed), ("direct", direct)):
            start = time.process_time()
            for _ in range(calls):
                await request(app, body, session)
            best[name] = min(best[name], (time.process_time() - start) / calls * 1e6)
    ratio = best["direct"] / best["channels"]
    print(f"tools/call in-process, CPU time, best of {rounds} rounds x {calls} calls:")
    print(f"  direct dispatch  {best['direct']:7.1f} us/call")
    extra = best["channels"] - best["direct"]
    print(f"  through Channels {best['channels']:7.1f} us/call  (+{extra:.1f} us)")
    print(f"  channels/direct rate {ratio:.3f} ({'within' if ratio >= 0.95 else 'NOT within'} 5 %)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    asyncio.run(main(args.calls, args.rounds))
