"""Benchmark our /mcp endpoint against the official SDK's server, in one invocation, on loopback.

    .venv/bin/python bench/bench.py                      # everything, ~5 s per measurement
    .venv/bin/python bench/bench.py --scenarios call --concurrency 16 --duration 3
    .venv/bin/python bench/bench.py --redis              # adds ours with REDIS_URL vs memory stores

For each mode (JSON responses; SSE responses: ours with ``MCP_ALWAYS_STREAM=1``, the peer in the
SDK's default SSE mode) it starts each server as a subprocess (one worker), runs every scenario at
every concurrency (see harness/loadgen.py), stops the server, and finally prints requests/s, p50 and p99
latency per row with the ratios ours/peer and the issue's targets. Not a test: nothing here is
collected by pytest. See bench/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness import servers
from harness.httpclient import Client, HttpxConnection, RawConnection, address, httpx_pool
from harness.loadgen import SCENARIOS, Result, run_scenario
from harness.servers import prepare_database

REDIS_DEFAULT = "redis://127.0.0.1:6379/0"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--server", choices=("uvicorn", "daphne"), default="uvicorn", help="ASGI server for ours"
    )
    parser.add_argument("--duration", type=float, default=5.0, help="measured seconds per scenario")
    parser.add_argument(
        "--warmup", type=float, default=1.0, help="unmeasured seconds before each measurement"
    )
    parser.add_argument(
        "--scenarios", default="call,list,session", help="comma list of call,list,session,stateless"
    )
    parser.add_argument("--concurrency", default="16,64", help="comma list of concurrent workers")
    parser.add_argument("--modes", default="json,sse", help="comma list of json,sse")
    parser.add_argument("--rounds", type=int, default=1, help="repeat each row, keep the median-rate round")
    parser.add_argument(
        "--tools", type=int, default=100, help="tools each server lists (ours is seeded to it)"
    )
    parser.add_argument(
        "--client", choices=("raw", "httpx"), default="raw", help="load generator HTTP client"
    )
    parser.add_argument(
        "--redis", nargs="?", const=REDIS_DEFAULT, help=f"also run ours on Redis (default {REDIS_DEFAULT})"
    )
    parser.add_argument(
        "--routing",
        action="store_true",
        help="also run ours with a hand-written direct dispatch (bench/apps/direct.py)",
    )
    parser.add_argument("--no-peer", action="store_true", help="skip the SDK peer")
    parser.add_argument("--no-ours", action="store_true", help="only the SDK peer (to check the harness)")
    parser.add_argument("--peer-lowlevel", action="store_true", help="peer uses the SDK's lowlevel Server")
    parser.add_argument("--json-out", type=Path, help="also write every measurement to this JSON file")
    args = parser.parse_args(argv)
    args.scenarios = [item for item in args.scenarios.split(",") if item]
    args.concurrency = [int(item) for item in args.concurrency.split(",") if item]
    args.modes = [item for item in args.modes.split(",") if item]
    unknown = set(args.scenarios) - set(SCENARIOS) or set(args.modes) - {"json", "sse"}
    if unknown:
        parser.error(f"unknown scenario or mode: {', '.join(sorted(unknown))}")
    return args


def connector(kind: str, url: str, concurrency: int) -> tuple[Callable[[], Client], Callable[[], object]]:
    """A factory of per-worker clients and the cleanup to run afterwards."""
    if kind == "httpx":
        pool = httpx_pool(concurrency)
        return (lambda: HttpxConnection(pool, url)), pool.aclose
    host, port = address(url)

    async def nothing() -> None:
        return None

    return (lambda: RawConnection(host, port, "/mcp")), nothing


async def measure(args: argparse.Namespace, url: str, scenario: str, concurrency: int) -> Result:
    connect, cleanup = connector(args.client, url, concurrency)
    try:
        return await run_scenario(connect, scenario, concurrency, args.duration, args.warmup, args.tools)
    finally:
        await cleanup()  # type: ignore[misc]


def servers_for(args: argparse.Namespace, sse: bool, workdir: Path) -> list[tuple[str, Any]]:
    """(label, not yet started server) pairs for one mode; each is a context manager with ``url``."""
    chosen: list[tuple[str, Any]] = []
    if not args.no_ours:
        if args.routing:  # first: the baseline, so each row measures it before the routed one
            chosen.append(servers.ours(args.server, sse, workdir, direct=True))
        chosen.append(servers.ours(args.server, sse, workdir))
        if args.redis:
            chosen.append(servers.ours(args.server, sse, workdir, args.redis))
    if not args.no_peer:
        chosen.append(servers.peer(sse, args.tools, workdir, args.peer_lowlevel))
    return chosen


def run_all(args: argparse.Namespace, workdir: Path) -> dict[tuple[str, str, str, int], Result]:
    """Per mode, every server runs at once (idle ones cost nothing) and each row measures them back
    to back, so a change in the machine's load hits both sides of a ratio alike. With ``--rounds``
    the rows are repeated and the round with the median rate is kept."""
    results: dict[tuple[str, str, str, int], Result] = {}
    for mode in args.modes:
        with contextlib.ExitStack() as stack:
            running = [
                (label, stack.enter_context(process))
                for label, process in servers_for(args, mode == "sse", workdir)
            ]
            for scenario in args.scenarios:
                for concurrency in args.concurrency:
                    rounds: dict[str, list[Result]] = {label: [] for label, _ in running}
                    for _ in range(args.rounds):
                        for label, server in running:
                            pid = getattr(getattr(server, "process", None), "pid", None)
                            cpu_before = servers.cpu_seconds(pid)
                            result = asyncio.run(measure(args, server.url, scenario, concurrency))
                            result.server_cpu = servers.cpu_seconds(pid) - cpu_before
                            rounds[label].append(result)
                            print_row(label, result)
                    for label, measured in rounds.items():
                        kind = (
                            "ours+redis"
                            if "redis" in label
                            else "ours-direct"
                            if "direct" in label
                            else label.split("-")[0]
                        )
                        results[(mode, scenario, kind, concurrency)] = sorted(measured, key=lambda r: r.rate)[
                            len(measured) // 2
                        ]
    return results


def print_row(label: str, result: Result) -> None:
    print(
        f"  {label:<22} {result.scenario:<8} c={result.concurrency:<3} {result.rate:9.0f} req/s  "
        f"p50 {result.p50_ms:7.2f} ms  p99 {result.p99_ms:7.2f} ms  "
        f"errors {result.errors}  client cpu {result.client_us_per_request:.0f} us/req  "
        f"server cpu {result.server_us_per_request:.0f} us/req",
        flush=True,
    )
    if result.first_error:
        print(f"    first error: {result.first_error}", flush=True)


def ratio(numerator: float, denominator: float) -> str:
    return f"{numerator / denominator:6.2f}" if denominator else "   n/a"


def report(args: argparse.Namespace, results: dict[tuple[str, str, str, int], Result]) -> None:
    known = ("ours", "ours+redis", "ours-direct", "peer")
    kinds = [kind for kind in known if any(key[2] == kind for key in results)]
    print("\nmode scenario   c  " + "".join(f"| {kind:>10} req/s  p50 ms  p99 ms " for kind in kinds), end="")
    print("| ours/peer req/s  p99 " if {"ours", "peer"} <= set(kinds) else "", end="")
    print("| redis/memory req/s " if "ours+redis" in kinds else "", end="")
    print("| channels/direct req/s  server cpu" if "ours-direct" in kinds else "")
    for mode in args.modes:
        for scenario in args.scenarios:
            for concurrency in args.concurrency:
                row = {kind: results.get((mode, scenario, kind, concurrency)) for kind in kinds}
                line = f"{mode:<4} {scenario:<8} {concurrency:>3}  "
                for kind in kinds:
                    r = row[kind]
                    line += f"| {r.rate:16.0f} {r.p50_ms:7.2f} {r.p99_ms:7.2f} " if r else "| " + " " * 33
                ours, peer, redis = row.get("ours"), row.get("peer"), row.get("ours+redis")
                direct = row.get("ours-direct")
                if ours and peer:
                    line += f"| {ratio(ours.rate, peer.rate):>15} {ratio(ours.p99_ms, peer.p99_ms)} "
                if ours and redis:
                    line += f"| {ratio(redis.rate, ours.rate):>18} "
                if ours and direct:
                    cpu = ratio(ours.server_us_per_request, direct.server_us_per_request)
                    line += f"| {ratio(ours.rate, direct.rate):>21} {cpu:>11}"
                print(line)
    print_targets(args, results)


def print_targets(args: argparse.Namespace, results: dict[tuple[str, str, str, int], Result]) -> None:
    for mode in args.modes:
        ours, peer = results.get((mode, "call", "ours", 16)), results.get((mode, "call", "peer", 16))
        if not (ours and peer and peer.rate):
            continue
        speed, p99 = ours.rate / peer.rate, ours.p99_ms / peer.p99_ms
        verdict = "MET" if speed >= 2 and p99 <= 1 else "MISSED"
        print(
            f"target tools/call {mode.upper()} c=16 (>= 2x peer req/s, p99 <= peer): {verdict} "
            f"({speed:.2f}x req/s, p99 {p99:.2f}x peer)"
        )


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="mcpbench-") as tmp:
        workdir = Path(tmp)
        if not args.no_ours:
            print("preparing our database (migrate, load_demo, seed_tools) ...", flush=True)
            prepare_database(workdir, args.tools)
        try:
            results = run_all(args, workdir)
        finally:
            if args.redis and not args.no_ours:
                servers.clean_redis(args.redis)
    report(args, results)
    if args.json_out:
        rows = [
            {
                "mode": mode,
                "scenario": scenario,
                "server": kind,
                "concurrency": c,
                "requests_per_s": r.rate,
                "p50_ms": r.p50_ms,
                "p99_ms": r.p99_ms,
                "errors": r.errors,
            }
            for (mode, scenario, kind, c), r in results.items()
        ]
        args.json_out.write_text(json.dumps(rows, indent=2))
    return 1 if any(r.errors for r in results.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
