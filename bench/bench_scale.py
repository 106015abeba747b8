"""Scale figures (issue 43): 1, 2, 4 and 8 workers over one Redis and over a three-shard Redis
Cluster, same run. Not a test (pytest never collects ``bench/``); loopback only; bounded (every
wait has a deadline). See bench/README.md "Scale".

    .venv/bin/python bench/bench_scale.py                                  # ~10 min on 2 cores
    .venv/bin/python bench/bench_scale.py --workers 1,2 --topologies redis --streams 200 --changes 3

Per topology a private Redis is started (``redis-server`` on a free port, or three masters of
``tests/support/redis_topologies.PrivateCluster``), never the shared 6379, so ``INFO`` deltas count
only this run. One SQLite database (migrate, load_demo: 100 tools) serves every worker; the audit
log is on (the default: with ``REDIS_URL`` it spools to Redis). Per worker count W, W uvicorn
processes (one worker each, a port each) start at once, and:

1. ``tools/call`` throughput: the closed-loop load of ``harness.loadgen`` (``--concurrency``
   keep-alive connections spread round robin over the W ports) for ``--duration`` s after
   ``--warmup`` s; the workers' CPU (``/proc/<pid>/stat``) per call, the client's, and the Redis
   commands and bytes per call (open mode). This process is the load generator and shares the
   machine's cores with the workers: past two workers the rate measures sharing, CPU per call
   does not.
2. Sessions: ``--streams`` sessions made over the W workers; worker RSS and Redis ``used_memory``
   per session, and ``MEMORY USAGE`` of the session keys.
3. Idle streams: each session opens its GET stream (``harness.streams``); RSS and Redis memory per
   idle stream.
4. Fan-out: ``--changes`` registry changes (a driver process commits an edit of the ``echo`` tool
   through the ORM, as ``bench_fanout.py`` does), then an idle window of the same length with the
   same streams open: the difference is the workers' CPU and the Redis commands and bytes a change
   costs, over the background (keep-alives, claim refreshes, heartbeats). Reported per change, per
   worker per change, and per notification delivered (the change's cost over the S streams).

Redis is emptied (``FLUSHALL``: it is private) after each worker count, or the next count's
changes would reach the sessions left live before it; first, on one Redis, ``MEMORY USAGE`` of a
session's log filled to its bound. Then, on one worker per topology, the per-call Redis cost
with an API key (``MCP_AUTH=keys``) and with an RS256 JWT verified against a JWKS served by this
process (``MCP_AUTH=oauth``), as ``bench_auth.py`` makes them. Last (``--tracemalloc-streams``),
``tracemalloc_streams.py`` on the private Redis: Python allocations per idle stream.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa
from harness import ROOT
from harness.change_driver import commit_changes
from harness.httpclient import Client, raw_connector
from harness.jwks import serve_jwks
from harness.loadgen import run_scenario
from harness.redis_stats import RedisNodes, Snapshot
from harness.servers import REDIS_PREFIX, cpu_seconds, create_key, free_port, our_env, prepare_database
from harness.streams import Counter, Stream, gather_limited, new_session, rss_kb, run

from tests.support.live_server import LiveServer
from tests.support.private_redis import PrivateRedis
from tests.support.redis_topologies import PrivateCluster

DEADLINE = 120.0
TOOLS = 100  # load_demo's tools plus seeded ones: what the other benches serve


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", default="1,2,4,8", help="worker counts, comma-separated")
    parser.add_argument("--topologies", default="redis,cluster", help="redis, cluster or both")
    parser.add_argument("--duration", type=float, default=3.0, help="seconds of tools/call load measured")
    parser.add_argument("--warmup", type=float, default=1.0)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--streams", type=int, default=2000,
                        help="sessions and idle streams per worker count")
    parser.add_argument("--changes", type=int, default=15, help="registry changes timed per worker count")
    parser.add_argument("--tracemalloc-streams", type=int, default=1000, help="0: skip tracemalloc")
    parser.add_argument("--json-out", type=Path)
    parser.add_argument("--driver", action="store_true", help=argparse.SUPPRESS)
    return parser.parse_args()


def driver() -> None:
    """One registry change per stdin line, its commit time on stdout (``harness/change_driver.py``)."""
    commit_changes("scale bench")


class Topology:
    """A private Redis or Cluster, the worker environment for it, and its change driver."""

    def __init__(self, name: str, workdir: Path) -> None:
        self.name = name
        directory = workdir / name
        if name == "cluster":
            self.cluster: PrivateCluster | None = PrivateCluster(directory).start()
            self.url, ports, mode = self.cluster.url, self.cluster.ports, "cluster"
        else:
            self.cluster = None
            self.single = PrivateRedis(directory).start()
            self.url, ports, mode = self.single.url, [self.single.port], "standalone"
        self.nodes = RedisNodes(ports)
        self.env = {**our_env(workdir, False, self.url), "MCP_REDIS_MODE": mode,
                    "MCP_MAX_SESSIONS_PER_PRINCIPAL": "1000000", "MCP_MAX_SESSIONS": "1000000"}
        env = {**os.environ, **self.env,
               "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
        self.driver = subprocess.Popen([sys.executable, __file__, "--driver"], cwd=ROOT, env=env,
                                       text=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def change(self) -> float:
        """One committed registry change; its commit time (epoch seconds)."""
        assert self.driver.stdin is not None and self.driver.stdout is not None
        self.driver.stdin.write("go\n")
        self.driver.stdin.flush()
        return float(json.loads(self.driver.stdout.readline())["committed"])

    def stop(self) -> None:
        self.driver.kill()
        self.nodes.close()
        if self.cluster is not None:
            self.cluster.stop()
        else:
            self.single.stop()


def start_workers(env: dict[str, str], count: int, port: int | None = None) -> list[LiveServer]:
    made = [LiveServer(env=env, server="uvicorn", migrate=False, port=port) for _ in range(count)]
    try:
        with ThreadPoolExecutor(count) as pool:
            for started in [pool.submit(worker.start) for worker in made]:
                started.result()
    except BaseException:
        for worker in made:
            worker.stop()
        raise
    return made


def pids_of(workers: list[LiveServer]) -> list[int]:
    return [w.process.pid for w in workers if w.process is not None]


def cpu_of(pids: list[int]) -> float:
    return sum(cpu_seconds(pid) for pid in pids)


def window(nodes: RedisNodes, pids: list[int], seconds: float) -> tuple[float, Snapshot]:
    """An idle window: the workers' CPU and the Redis work over ``seconds`` with nothing sent."""
    cpu, snap = cpu_of(pids), nodes.snapshot()
    time.sleep(seconds)
    return cpu_of(pids) - cpu, nodes.snapshot() - snap


def calls(workers: list[LiveServer], nodes: RedisNodes, args: argparse.Namespace,
          token: str | None = None) -> dict[str, Any]:
    """tools/call load over every worker; rate, latency, CPU and Redis per call."""
    pids = pids_of(workers)
    ports = itertools.cycle([w.port for w in workers])

    def connect() -> Client:
        return raw_connector(f"http://127.0.0.1:{next(ports)}/mcp", token)()

    idle_cpu, idle = window(nodes, pids, 2.0)
    cpu, snap, began = cpu_of(pids), nodes.snapshot(), time.monotonic()
    result = asyncio.run(run_scenario(connect, "call", args.concurrency, args.duration, args.warmup, TOOLS))
    wall = time.monotonic() - began
    worker_cpu = cpu_of(pids) - cpu - idle_cpu * wall / 2.0
    work = (nodes.snapshot() - snap) - idle.scaled(wall / 2.0)
    if result.errors:
        print(f"    {result.errors} errors, first: {result.first_error}", flush=True)
    return {"calls_per_s": round(result.rate), "p50_ms": round(result.p50_ms, 2),
            "p99_ms": round(result.p99_ms, 2),
            "errors": result.errors, "requests": result.total_requests,
            "worker_cpu_us_per_call": round(worker_cpu / max(1, result.total_requests) * 1e6),
            "client_cpu_us_per_call": round(result.client_us_per_request),
            "redis_per_call": work.per(max(1, result.total_requests))}


async def sessions_and_streams(workers: list[LiveServer], topology: Topology, total: int,
                               changes: int) -> dict[str, Any]:
    ports, pids, nodes = [w.port for w in workers], pids_of(workers), topology.nodes
    rss0, mem0 = sum(rss_kb(p) for p in pids), nodes.snapshot().used_memory
    targets = [ports[i % len(ports)] for i in range(total)]
    sessions = await asyncio.wait_for(gather_limited(
        [lambda p=port: new_session(p) for port in targets]), DEADLINE)
    await asyncio.sleep(1.0)
    rss1, mem1 = sum(rss_kb(p) for p in pids), nodes.snapshot().used_memory
    keys, key_bytes = nodes.memory_usage(f"{REDIS_PREFIX}:session:*")
    counter = Counter(total)
    streams = [Stream(ports[i % len(ports)], sid, counter) for i, sid in enumerate(sessions)]
    tasks = [asyncio.ensure_future(s.run()) for s in streams]
    await asyncio.wait_for(asyncio.gather(*(s.opened.wait() for s in streams)), DEADLINE)
    await asyncio.sleep(2.0)  # idle
    rss2, mem2 = sum(rss_kb(p) for p in pids), nodes.snapshot().used_memory
    failed = sum(1 for s in streams if s.failed is not None)
    out: dict[str, Any] = {
        "sessions": total, "streams_failed": failed, "session_keys_seen": keys,
        "worker_rss_kb_per_session": round((rss1 - rss0) / total, 2),
        "redis_bytes_per_session": round((mem1 - mem0) / total),
        "session_key_memory_usage_bytes": round(key_bytes),
        "worker_rss_kb_per_idle_stream": round((rss2 - rss1) / max(1, total - failed), 2),
        "redis_bytes_per_idle_stream": round((mem2 - mem1) / max(1, total - failed)),
    }
    if failed:
        print(f"    {failed} streams failed, e.g. {next(s.failed for s in streams if s.failed)}", flush=True)
        counter.total = total - failed
    latencies: list[float] = []
    topology.change()  # warm-up: the driver's first publish connects to Redis
    await asyncio.wait_for(counter.event(1).wait(), 20.0)
    await asyncio.sleep(0.3)
    cpu, snap, began = cpu_of(pids), nodes.snapshot(), time.monotonic()
    for n in range(2, changes + 2):
        committed = await asyncio.to_thread(topology.change)
        await asyncio.wait_for(counter.event(n).wait(), 20.0)
        latencies.append((max(s.received[n - 1] for s in streams if s.failed is None) - committed) * 1000)
        await asyncio.sleep(0.25)
    wall = time.monotonic() - began
    after = nodes.snapshot()
    busy_cpu, busy = cpu_of(pids) - cpu, after - snap
    logs, log_bytes = nodes.memory_usage(f"*{REDIS_PREFIX}:ev:*:events:*")
    idle_cpu, idle = await asyncio.to_thread(window, nodes, pids, wall)
    change_cpu = busy_cpu - idle_cpu
    work = busy - idle
    delivered = total - failed
    out.update({
        "changes": changes, "commit_to_last_stream_p50_ms": round(statistics.median(latencies), 1),
        "commit_to_last_stream_max_ms": round(max(latencies), 1),
        "worker_cpu_ms_per_change": round(change_cpu / changes * 1000, 2),
        "worker_cpu_ms_per_change_per_worker": round(change_cpu / changes / len(pids) * 1000, 2),
        "worker_cpu_us_per_notification": round(change_cpu / changes / max(1, delivered) * 1e6, 1),
        "idle_worker_cpu_ms_per_s": round(idle_cpu / wall * 1000, 2),
        "redis_per_change": work.per(changes),
        # Each change appends one entry to every session's standalone-stream log (kept for
        # Last-Event-ID replay, up to max_events and the TTL): Redis grows per change and client.
        "redis_bytes_per_stream_per_change": round(
            (after.used_memory - mem2) / (changes + 1) / max(1, delivered)),
        "event_logs_seen": logs, "event_log_memory_usage_bytes": round(log_bytes),
        "redis_idle_commands_per_s": round(idle.commands / wall, 1),
    })
    for stream in streams:
        stream.close()
    for task in tasks:
        task.cancel()
    with contextlib.suppress(BaseException):
        await asyncio.gather(*tasks, return_exceptions=True)
    return out


def fleet_row(topology: Topology, count: int, args: argparse.Namespace) -> dict[str, Any]:
    workers = start_workers({**topology.env, "MCP_AUTH": "open"}, count)
    try:
        row: dict[str, Any] = {"workers": count, "call": calls(workers, topology.nodes, args)}
        row["fanout"] = run(sessions_and_streams(workers, topology, args.streams, args.changes))
        if topology.cluster is None:  # the logs are there now; the flush below drops them
            row["full_log"] = full_log(topology)
        return row
    finally:
        for worker in workers:
            worker.stop()
        # The next worker count starts on an empty store: the live sessions left here would
        # otherwise be written to by its changes (a change reaches every live session).
        for client in topology.nodes.clients:
            client.flushall()


def auth_rows(topology: Topology, workdir: Path, args: argparse.Namespace) -> dict[str, Any]:
    """One worker with an API key, then one verifying RS256 JWTs against a JWKS (bench_auth.py)."""
    key = create_key(workdir, f"scale-{topology.name}")
    private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    issuer, jwks_server = serve_jwks(private)
    port = free_port()
    resource = f"http://127.0.0.1:{port}/mcp"
    now = int(time.time())
    token = jwt.encode({"iss": issuer, "sub": "bench", "aud": resource, "iat": now, "exp": now + 3600,
                        "scope": "mcp"}, private, algorithm="RS256", headers={"kid": "bench"})
    modes: dict[str, tuple[dict[str, str], str, int | None]] = {
        "keyed": ({"MCP_AUTH": "keys"}, key, None),
        "oauth": ({"MCP_AUTH": "oauth", "MCP_OAUTH_ISSUER": issuer, "MCP_OAUTH_JWKS_URL": f"{issuer}/jwks",
                   "MCP_RESOURCE_URL": resource}, token, port),
    }
    rows: dict[str, Any] = {}
    try:
        for name, (extra, credential, fixed_port) in modes.items():
            (worker,) = start_workers({**topology.env, **extra}, 1, fixed_port)
            try:
                rows[name] = calls([worker], topology.nodes, args, credential)
            finally:
                worker.stop()
            print(f"  {name}: {json.dumps(rows[name])}", flush=True)
    finally:
        jwks_server.shutdown()
    return rows


def full_log(topology: Topology, entries: int = 1000) -> dict[str, Any]:
    """``MEMORY USAGE`` of one standalone-stream log at its retention bound: a copy of a real
    session's log with its last entry appended until it holds ``entries`` (the event store's
    ``max_events``), on one server. A session's log reaches this when changes come faster than
    ``max_events`` per TTL (1,000 an hour: 17 a minute)."""
    client = topology.nodes.clients[0]
    source = next(iter(client.scan_iter(f"*{REDIS_PREFIX}:ev:*:events:*", 1000)), None)
    if source is None:
        return {}
    entry = client.xrevrange(source, count=1)[0][1]
    probe = f"{REDIS_PREFIX}:scale-probe"
    pipe = client.pipeline(transaction=False)
    for _ in range(entries):
        pipe.xadd(probe, entry)
    pipe.execute()
    size = int(client.memory_usage(probe, samples=0) or 0)
    client.delete(probe)
    return {"entries": entries, "entry_fields_bytes": sum(len(k) + len(v) for k, v in entry.items()),
            "log_memory_usage_bytes": size, "bytes_per_entry": round(size / entries)}


def traced_streams(url: str, streams: int) -> str:
    argv = [sys.executable, str(ROOT / "bench" / "tracemalloc_streams.py"), "--streams", str(streams),
            "--top", "8", "--redis", url]
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    return done.stdout.strip() or done.stderr.strip()[-2000:]


def main() -> int:
    args = parse_args()
    if args.driver:
        driver()
        return 0
    counts = [int(c) for c in args.workers.split(",")]
    report: dict[str, Any] = {"args": {k: str(v) for k, v in vars(args).items()}, "topologies": {}}
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="mcpscale-") as tmp:
        workdir = Path(tmp)
        print("preparing the database (migrate, load_demo, seed_tools) ...", flush=True)
        prepare_database(workdir, TOOLS)
        for name in args.topologies.split(","):
            topology = Topology(name, workdir)
            rows: dict[str, Any] = {"fleets": []}
            try:
                for count in counts:
                    print(f"{name}: {count} worker(s) ...", flush=True)
                    row = fleet_row(topology, count, args)
                    print(f"  {json.dumps(row)}", flush=True)
                    rows["fleets"].append(row)
                rows["auth"] = auth_rows(topology, workdir, args)
                if name == "redis" and args.tracemalloc_streams:
                    print("tracemalloc per idle stream ...", flush=True)
                    rows["tracemalloc"] = traced_streams(topology.url, args.tracemalloc_streams)
                    print(rows["tracemalloc"], flush=True)
            finally:
                topology.stop()
            report["topologies"][name] = rows
    report["elapsed_s"] = round(time.monotonic() - started)
    print(json.dumps(report, indent=2))
    print_tables(report)
    if args.json_out is not None:
        args.json_out.write_text(json.dumps(report, indent=2) + "\n")
    return 0


def print_tables(report: dict[str, Any]) -> None:
    def line(cells: list[object]) -> None:
        print("| " + " | ".join(str(c) for c in cells) + " |")

    line(["topology", "W", "calls/s", "p99 ms", "worker CPU µs/call", "client CPU µs/call",
          "Redis cmds/call", "Redis B/call", "Redis CPU µs/call", "worker CPU ms/change",
          "µs/notification", "Redis cmds/change", "Redis KB/change", "Redis CPU ms/change",
          "commit→last p50 ms"])
    for name, rows in report["topologies"].items():
        for row in rows["fleets"]:
            c, f = row["call"], row["fanout"]
            rc, rf = c["redis_per_call"], f["redis_per_change"]
            line([name, row["workers"], c["calls_per_s"], c["p99_ms"], c["worker_cpu_us_per_call"],
                  c["client_cpu_us_per_call"], rc["commands"], rc["bytes_in"] + rc["bytes_out"],
                  rc["redis_cpu_us"], f["worker_cpu_ms_per_change"], f["worker_cpu_us_per_notification"],
                  rf["commands"], round((rf["bytes_in"] + rf["bytes_out"]) / 1024, 1),
                  round(rf["redis_cpu_us"] / 1000, 2), f["commit_to_last_stream_p50_ms"]])
    print()
    line(["topology", "W", "RSS KB/session", "Redis B/session", "session key B", "RSS KB/idle stream",
          "Redis B/idle stream", "event log B", "Redis B/stream/change", "idle worker CPU ms/s"])
    for name, rows in report["topologies"].items():
        for row in rows["fleets"]:
            f = row["fanout"]
            line([name, row["workers"], f["worker_rss_kb_per_session"], f["redis_bytes_per_session"],
                  f["session_key_memory_usage_bytes"], f["worker_rss_kb_per_idle_stream"],
                  f["redis_bytes_per_idle_stream"], f["event_log_memory_usage_bytes"],
                  f["redis_bytes_per_stream_per_change"], f["idle_worker_cpu_ms_per_s"]])
    print()
    line(["topology", "auth (1 worker)", "calls/s", "worker CPU µs/call", "Redis cmds/call", "Redis B/call",
          "Redis CPU µs/call", "commands"])
    for name, rows in report["topologies"].items():
        first = rows["fleets"][0]["call"] if rows["fleets"] and rows["fleets"][0]["workers"] == 1 else None
        modes = {**({"open": first} if first else {}), **rows.get("auth", {})}
        for mode, c in modes.items():
            rc = c["redis_per_call"]
            line([name, mode, c["calls_per_s"], c["worker_cpu_us_per_call"], rc["commands"],
                  rc["bytes_in"] + rc["bytes_out"], rc["redis_cpu_us"],
                  ", ".join(f"{k} {v}" for k, v in rc["by_command"].items())])


if __name__ == "__main__":
    sys.exit(main())
