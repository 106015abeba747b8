"""What the ``keyed`` row pays beyond ``open``, part by part: servers that differ by one setting,
measured back to back in rounds (server CPU per tools/call, ``/proc``), as ``run_all.py`` does.

    flock /tmp/bench.lock .venv/bin/python bench/bench_keyed_parts.py --rounds 3

Rows: ``open`` (no key, audit or metrics), ``key`` (an API key only), ``key+metrics``,
``key+audit`` (the Redis spool, drained by a ``drain_audit`` process), ``keyed`` (all three).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import sys
import tempfile
from pathlib import Path

from harness import servers
from harness.drain import SPOOL_PREFIX, Drain
from harness.httpclient import raw_connector
from harness.loadgen import run_scenario
from harness.servers import prepare_database

from tests.support.live_server import LiveServer


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--duration", type=float, default=4.0)
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/0")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="mcpbench-parts-") as tmp:
        workdir = Path(tmp)
        prepare_database(workdir, 100)
        key = servers.create_key(workdir)
        base = {**servers.our_env(workdir), "MCP_AUTH": "keys", "MCP_AUDIT": "0", "MCP_METRICS": "0"}
        spool = {"MCP_AUDIT": "1", "MCP_AUDIT_SINK": "redis", "MCP_AUDIT_REDIS_URL": args.redis,
                 "MCP_KEY_PREFIX": SPOOL_PREFIX}
        configs = {
            "open": {**base, "MCP_AUTH": "open"},
            "key": base,
            "key+metrics": {**base, "MCP_METRICS": "1"},
            "key+audit": {**base, **spool},
            "keyed": {**base, **spool, "MCP_METRICS": "1"},
        }
        found: dict[str, list[float]] = {name: [] for name in configs}
        with contextlib.ExitStack() as stack:
            running = {name: stack.enter_context(LiveServer(env=env, migrate=False))
                       for name, env in configs.items()}
            stack.enter_context(Drain(configs["keyed"], args.redis))
            for n in range(args.rounds):
                for name, server in running.items():
                    pid = server.process.pid if server.process else None
                    before = servers.cpu_seconds(pid)
                    token = None if name == "open" else key
                    result = asyncio.run(run_scenario(raw_connector(server.url, token), "call", 16,
                                                      args.duration, 1.0, 100))
                    result.server_cpu = servers.cpu_seconds(pid) - before
                    found[name].append(result.server_us_per_request)
                    print(f"round {n + 1} {name:<12} {result.rate:7.0f} req/s  "
                          f"{result.server_us_per_request:5.1f} us/call", flush=True)
    open_us = found["open"]
    print("\n| row | server CPU us/call (median) | minus open, per round (median) |")
    print("| --- | --- | --- |")
    for name, values in found.items():
        extra = statistics.median(v - o for v, o in zip(values, open_us, strict=True))
        print(f"| {name} | {statistics.median(values):.1f} | {extra:+.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
