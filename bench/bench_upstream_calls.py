"""A ``tools/call`` proxied to an upstream MCP server against a handler tool, same server, same run
(issue 40: proxied ÷ handler >= 0.3, and the proxied p99 within the upstream's own p99 + 5 ms).
Not a test; see bench/README.md.

    .venv/bin/python bench/bench_upstream_calls.py                   # c=16, 3 rounds of 4 s
    .venv/bin/python bench/bench_upstream_calls.py --rounds 5 --concurrency 4,16

Two upstreams, each its own process on loopback, Streamable HTTP with JSON responses: the official
Python SDK's ``MCPServer`` (``tests/support/sdk_upstream_process.py``, mirrored as ``up_echo``) and
a minimal hand-written one (``bench/apps/mcp_upstream.py`` under uvicorn, mirrored as
``fast_echo``): the SDK's server answers fewer calls per second than our handler tool, which caps
a proxied call's rate below the ratio asked, so the fast one measures our call path itself. One of
our servers (uvicorn, one worker, the bench database of harness/servers.py with the ``Upstream``
rows and their mirrored tools, open mode) serves ``echo`` (load_demo's handler tool), ``up_echo``
and ``fast_echo``. Each round measures, back to back: each upstream's ``echo`` called directly
(its own latency), our ``echo``, our ``up_echo``, our ``fast_echo``; closed loop, ``c`` keep-alive
connections, each answer checked for ``hello``. Ratios and the p99 margins are computed within a
round; the median round is kept. Server CPU per call comes from /proc.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
from pathlib import Path

from harness import servers
from harness.loadgen import Result, closed_loop
from harness.servers import BIN, Running, ServerSpec, cpu_seconds, prepare_database

from tests.support.live_server import LiveServer
from tests.support.sdk_upstream_process import UpstreamProcess
from tests.support.upstream_rows import mirror_script

CALLS = {
    "echo": b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo",'
            b'"arguments":{"message":"hello"}}}',
    "up_echo": b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"up_echo",'
               b'"arguments":{"text":"hello"}}}',
    "fast_echo": b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"fast_echo",'
                 b'"arguments":{"text":"hello"}}}',
}
DIRECT = (b'{"jsonrpc":"2.0","id":%d,"method":"tools/call",'
          b'"params":{"name":"echo","arguments":{"text":"hello"}}}')


async def measure(url: str, template: bytes, label: str, concurrency: int, duration: float, warmup: float,
                  pid: int | None) -> Result:
    return await closed_loop(url, template, b"hello", label, concurrency, duration, warmup,
                             lambda: cpu_seconds(pid))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=4.0)
    parser.add_argument("--warmup", type=float, default=1.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--concurrency", default="16")
    args = parser.parse_args()
    levels = [int(c) for c in args.concurrency.split(",")]
    ok = True
    with (
        tempfile.TemporaryDirectory(prefix="mcpbench-upstream-") as tmp,
        UpstreamProcess(json_response=True) as upstream,
    ):
        workdir = Path(tmp)
        fast_spec = ServerSpec("mcp-upstream", [str(BIN / "python"), "-m", "uvicorn",
                                                "bench.apps.mcp_upstream:application", "--port", "{port}",
                                                "--log-level", "warning", "--no-access-log"])
        fast = Running(fast_spec, workdir)  # its port is chosen now, the process started below
        print("preparing our database (migrate, load_demo, seed_tools, the upstream's rows) ...", flush=True)
        prepare_database(workdir, 100)
        script = mirror_script("up", upstream.url, tools=("echo",), resources=False, timeout=30.0,
                               max_concurrency=64)
        servers.manage_bench_db(workdir, "shell", "-c", script)
        script = mirror_script("fast", fast.url, tools=("echo",), resources=False, timeout=30.0,
                               max_concurrency=64)
        servers.manage_bench_db(workdir, "shell", "-c", script)
        env = {**servers.our_env(workdir), "MCP_AUTH": "open", "REGISTRY_HTTP_ALLOWED_HOSTS": "127.0.0.1"}
        with fast, LiveServer(env=env, migrate=False) as ours:
            pid = ours.process.pid if ours.process else None
            upstream_pid = upstream.process.pid if upstream.process else None
            fast_pid = fast.process.pid if fast.process else None

            def run(url: str, template: bytes, label: str, c: int, server_pid: int | None) -> Result:
                return asyncio.run(measure(url, template, label, c, args.duration, args.warmup, server_pid))

            for c in levels:
                ratios: list[float] = []
                margins: list[float] = []
                fast_ratios: list[float] = []
                fast_margins: list[float] = []
                for _ in range(args.rounds):
                    row = {
                        "upstream direct": run(upstream.url, DIRECT, "upstream direct", c, upstream_pid),
                        "fast direct": run(fast.url, DIRECT, "fast direct", c, fast_pid),
                        "echo": run(ours.url, CALLS["echo"], "echo", c, pid),
                        "up_echo": run(ours.url, CALLS["up_echo"], "up_echo", c, pid),
                        "fast_echo": run(ours.url, CALLS["fast_echo"], "fast_echo", c, pid),
                    }
                    for label, result in row.items():
                        error = f"  first error: {result.first_error}" if result.first_error else ""
                        print(f"  {label:<15} c={c:<3} {result.rate:8.0f} req/s  p50 {result.p50_ms:7.2f} ms"
                              f"  p99 {result.p99_ms:7.2f} ms"
                              f"  server {result.server_us_per_request:6.0f} µs/call"
                              f"  errors {result.errors}{error}", flush=True)
                        ok &= not result.errors
                    handler = row["echo"]
                    for proxied, direct, into, margin_into in (
                            (row["up_echo"], row["upstream direct"], ratios, margins),
                            (row["fast_echo"], row["fast direct"], fast_ratios, fast_margins)):
                        into.append(proxied.rate / handler.rate if handler.rate else 0.0)
                        margin_into.append(proxied.p99_ms - direct.p99_ms)
                for label, rs, ms in (("SDK upstream", ratios, margins), ("fast upstream", fast_ratios,
                                                                           fast_margins)):
                    ratio, margin = statistics.median(rs), statistics.median(ms)
                    met = ratio >= 0.3 and margin <= 5.0
                    ok &= met
                    rounds = ", ".join(f"{r:.3f}" for r in rs)
                    print(f"c={c} {label}: proxied ÷ handler {ratio:.3f} (rounds: {rounds}),"
                          f" proxied p99 - upstream p99 {margin:+.2f} ms (rounds: "
                          f"{', '.join(f'{m:+.2f}' for m in ms)}); target >= 0.3 and <= +5 ms: "
                          f"{'MET' if met else 'MISSED'}", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
