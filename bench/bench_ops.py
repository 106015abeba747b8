"""tools/call through nginx to one and to two workers, and what the metrics cost, in one run.

    .venv/bin/python bench/bench_ops.py                  # c=16, 5 s per row, 3 rounds
    .venv/bin/python bench/bench_ops.py --duration 3 --rounds 1 --concurrency 16,64

Every server below runs at once on one prepared SQLite database (migrate, load_demo, 100 tools)
and every round measures them back to back, so a change in the machine's load hits them alike;
the round with the median rate is kept per row. JSON mode, ``tools/call echo`` (harness/loadgen.py).

- ``direct metrics off`` / ``direct metrics on``: one uvicorn worker, memory stores, with
  ``MCP_METRICS=0`` / ``1`` (each process reports its own metrics); ``direct metrics on,
  multiprocess``: the same with ``PROMETHEUS_MULTIPROC_DIR`` set (every sample goes to a shared
  file, as in the fleet). The ratios are the metrics' overhead.
- ``direct redis``: one worker on Redis (``REDIS_URL``, default the local one, keys under a
  per-run prefix), the baseline of the two below.
- ``nginx 1 worker`` / ``nginx 2 workers``: the fleet (``mcpsite.fleet.Balancer`` in front of
  workers on Redis, multiprocess metrics on): what the balancer costs, and what a second worker
  buys on this machine (2 cores shared by the load generator, nginx and the workers).

Not a test: pytest never collects ``bench/``. Loopback only; bounded in time; cleans its Redis keys.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sys
import tempfile
from pathlib import Path

from harness import servers
from harness.loadgen import Result, json_calls
from harness.servers import prepare_database

from mcpsite.fleet import Balancer
from tests.support.live_server import LiveServer

REDIS_DEFAULT = "redis://127.0.0.1:6379/0"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=5.0)
    parser.add_argument("--warmup", type=float, default=1.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--concurrency", default="16")
    parser.add_argument("--redis", default=REDIS_DEFAULT)
    args = parser.parse_args(argv)
    args.concurrency = [int(c) for c in args.concurrency.split(",") if c]
    return args


class Target:
    """Something with a URL to load (a LiveServer, or a Balancer over some) and the worker
    processes whose CPU time serving it costs."""

    def __init__(self, label: str, url: str, workers: list[LiveServer]) -> None:
        self.label, self.url, self.workers = label, url, workers

    def cpu_seconds(self) -> float:
        """User + system CPU time of the workers so far (/proc; the load on the rest of the
        machine changes how fast they run, much less how much CPU each request takes)."""
        ticks = 0
        for worker in self.workers:
            assert worker.process is not None
            fields = Path(f"/proc/{worker.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
            ticks += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of stat)
        return ticks / os.sysconf("SC_CLK_TCK")


def start_all(stack: contextlib.ExitStack, workdir: Path, redis_url: str) -> list[Target]:
    base = servers.our_env(workdir)
    on_redis = {**base, "REDIS_URL": redis_url, "MCP_KEY_PREFIX": servers.REDIS_PREFIX}

    def worker(env: dict[str, str], multiprocess: str | None = None) -> LiveServer:
        if multiprocess:
            Path(multiprocess).mkdir(parents=True, exist_ok=True)
            env = {**env, "PROMETHEUS_MULTIPROC_DIR": multiprocess}
        server = LiveServer(env=env, migrate=False).start()
        stack.callback(server.stop)
        return server

    def balanced(workers: list[LiveServer]) -> Balancer:
        balancer = Balancer([f"127.0.0.1:{w.port}" for w in workers]).start()
        stack.callback(balancer.stop)
        return balancer

    def direct(label: str, server: LiveServer) -> Target:
        return Target(label, server.url, [server])

    targets = [
        direct("direct metrics off", worker({**base, "MCP_METRICS": "0"})),
        direct("direct metrics on", worker({**base, "MCP_METRICS": "1"})),
        direct("direct metrics on, multiprocess", worker(base, str(workdir / "mp-direct"))),
        direct("direct redis", worker(on_redis, str(workdir / "mp-redis"))),
    ]
    for count in (1, 2):
        group = [worker(on_redis, str(workdir / f"mp-{count}")) for _ in range(count)]
        targets.append(Target(f"nginx {count} worker{'s' if count > 1 else ''}", balanced(group).url, group))
    return targets


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    rows: dict[tuple[str, int], Result] = {}
    cpu: dict[tuple[str, int], float] = {}  # server CPU µs per request, median round
    with tempfile.TemporaryDirectory(prefix="mcpbench-ops-") as tmp, contextlib.ExitStack() as stack:
        workdir = Path(tmp)
        print("preparing the database (migrate, load_demo, seed_tools) ...", flush=True)
        prepare_database(workdir, 100)
        stack.callback(servers.clean_redis, args.redis)
        targets = start_all(stack, workdir, args.redis)
        for concurrency in args.concurrency:
            rounds: dict[str, list[Result]] = {t.label: [] for t in targets}
            costs: dict[str, list[float]] = {t.label: [] for t in targets}
            for n in range(args.rounds):
                for target in targets:
                    before = target.cpu_seconds()
                    result = asyncio.run(json_calls(target.url, concurrency, args.duration, args.warmup, 100))
                    # Whole run (warm-up included) over the requests of the whole run.
                    served = result.rate * (args.duration + args.warmup)
                    per_request = (target.cpu_seconds() - before) / served * 1e6 if served else 0.0
                    rounds[target.label].append(result)
                    costs[target.label].append(per_request)
                    print(
                        f"  round {n + 1} {target.label:<34} c={concurrency:<3} {result.rate:8.0f} req/s  "
                        f"p99 {result.p99_ms:6.2f} ms  server cpu {per_request:5.0f} us/req  "
                        f"errors {result.errors}",
                        flush=True,
                    )
            for label, measured in rounds.items():
                rows[(label, concurrency)] = sorted(measured, key=lambda r: r.rate)[len(measured) // 2]
                cpu[(label, concurrency)] = sorted(costs[label])[len(costs[label]) // 2]
    report(rows, cpu, args.concurrency)
    return 1 if any(r.errors for r in rows.values()) else 0


Rows = dict[tuple[str, int], Result]


def report(rows: Rows, cpu: dict[tuple[str, int], float], concurrencies: list[int]) -> None:
    def rate(label: str, c: int) -> float:
        return rows[(label, c)].rate

    print("\ntools/call, JSON                    c   req/s   p50 ms  p99 ms  server CPU us/req")
    for (label, c), r in rows.items():
        print(f"{label:<34} {c:>3} {r.rate:7.0f} {r.p50_ms:7.2f} {r.p99_ms:7.2f}  {cpu[(label, c)]:8.0f}")
    for c in concurrencies:
        off, off_cpu = rate("direct metrics off", c), cpu[("direct metrics off", c)]
        metered = {
            "direct metrics on": "one process",
            "direct metrics on, multiprocess": "multiprocess files",
        }
        for label, what in metered.items():
            print(f"c={c}: metrics ({what}): throughput {(1 - rate(label, c) / off) * 100:+5.1f} % lost, "
                  f"server CPU per request {(cpu[(label, c)] / off_cpu - 1) * 100:+5.1f} %")
        nginx = 1 - rate("nginx 1 worker", c) / rate("direct redis", c)
        print(f"c={c}: nginx in front of 1 worker: throughput {nginx * 100:+5.1f} % lost")
        gain = rate("nginx 2 workers", c) / rate("nginx 1 worker", c)
        print(f"c={c}: 2 workers behind nginx give {gain:.2f}x the rate of 1")


if __name__ == "__main__":
    sys.exit(main())
