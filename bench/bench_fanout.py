"""Fan-out benchmark: one ``list_changed`` to many open GET streams over two workers, and the
memory each idle stream costs. Not a test (pytest never collects ``bench/``); loopback only;
bounded (every wait has a deadline). See bench/README.md "Fan-out".

    .venv/bin/python bench/bench_fanout.py                          # 1,000 streams, 2 workers, 20 changes
    .venv/bin/python bench/bench_fanout.py --streams 200 --changes 5
    .venv/bin/python bench/bench_fanout.py --memory-backend         # + one worker on memory stores

Two uvicorn processes (one worker each, two ports) share one Redis (keys under a per-run prefix,
deleted at the end) and one SQLite database. ``--streams`` sessions are initialized, half on each
worker, and each opens its standalone GET stream (raw asyncio sockets, ``uvloop`` if installed).
A separate driver process (``--driver``: Django ORM on the same database and Redis) changes the
``echo`` tool's description in a transaction and timestamps the commit from an ``on_commit``
callback queued before the registry's own (which publishes the change on the bus). The figure per
change is commit → the LAST stream's receipt of ``notifications/tools/list_changed``; p50/p99 over
``--changes``, after ``--warmup-changes`` unmeasured ones (printed apart: the first publish of
the driver process opens its Redis connection and imports the bus). Memory: each server's RSS
after the sessions exist and before the streams open, then again with every stream open and
idle; the difference divided by the number of streams.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness import ROOT
from harness.change_driver import commit_changes
from harness.servers import clean_redis, cpu_seconds, manage_bench_db, our_env
from harness.streams import Counter, Stream, gather_limited, new_session, rss_kb, run

from tests.support.live_server import LiveServer

REDIS_DEFAULT = "redis://127.0.0.1:6379/0"
DEADLINE = 60.0


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--streams", type=int, default=1000, help="open GET streams in total")
    parser.add_argument("--changes", type=int, default=20, help="registry changes to time")
    parser.add_argument("--warmup-changes", type=int, default=1,
                        help="unmeasured changes first (the driver's first publish connects to Redis)")
    parser.add_argument("--workers", type=int, default=2, help="uvicorn processes (one port each)")
    parser.add_argument("--redis", default=REDIS_DEFAULT, help="shared Redis URL")
    parser.add_argument("--memory-backend", action="store_true",
                        help="also measure memory per idle stream on one worker with memory stores")
    parser.add_argument("--json-out", type=Path, help="also write the JSON report to this file")
    parser.add_argument("--driver", action="store_true", help=argparse.SUPPRESS)
    return parser.parse_args()


# -- the change driver (a separate process: Django ORM, commits, timestamps) --------------------
def driver() -> None:
    commit_changes("fan-out bench")  # harness/change_driver.py


async def measure(ports: list[int], pids: list[int], total: int, changes: int,
                  driver_proc: subprocess.Popen[str] | None, warmup: int = 1) -> dict[str, object]:
    # Sessions first (spread over the workers), then RSS, then the streams.
    targets = [ports[i % len(ports)] for i in range(total)]
    sessions = await asyncio.wait_for(gather_limited(
        [lambda p=port: new_session(p) for port in targets]), DEADLINE)
    counter = Counter(total)
    streams = [Stream(ports[i % len(ports)], sid, counter) for i, sid in enumerate(sessions)]
    await asyncio.sleep(1.0)
    before = {pid: rss_kb(pid) for pid in pids}
    tasks = [asyncio.ensure_future(s.run()) for s in streams]
    opened = asyncio.gather(*(s.opened.wait() for s in streams))
    await asyncio.wait_for(opened, DEADLINE)
    await asyncio.sleep(2.0)  # idle
    after = {pid: rss_kb(pid) for pid in pids}
    failed = [s for s in streams if s.failed is not None]
    if failed:
        print(f"  {len(failed)} of {total} streams failed to open or broke, e.g.: {failed[0].failed}")
        streams = [s for s in streams if s.failed is None]
        counter.total = len(streams)
    per_stream_kb = sum(after[p] - before[p] for p in pids) / max(1, len(streams))
    result: dict[str, object] = {"streams": total, "streams_failed": len(failed), "workers": len(ports),
                                 "rss_before_kb": before, "rss_after_kb": after,
                                 "kb_per_idle_stream": round(per_stream_kb, 1)}
    latencies: list[float] = []
    firsts: list[float] = []
    if driver_proc is not None:
        assert driver_proc.stdin is not None and driver_proc.stdout is not None
        cold: list[float] = []
        cpu_before: dict[int, float] = {}
        client_before = 0.0
        for n in range(1, warmup + changes + 1):
            if n == warmup + 1:
                cpu_before = {pid: cpu_seconds(pid) for pid in pids}
                client_before = time.process_time()
            driver_proc.stdin.write("go\n")
            driver_proc.stdin.flush()
            line = await asyncio.wait_for(asyncio.to_thread(driver_proc.stdout.readline), DEADLINE)
            committed = json.loads(line)["committed"]
            try:
                await asyncio.wait_for(counter.event(n).wait(), 10.0)
            except TimeoutError:
                missing = sum(1 for s in streams if len(s.received) < n)
                print(f"  change {n:2d}: {missing} streams got nothing within 10 s; stopping")
                result["streams_missing_a_change"] = missing
                break
            last = (max(s.received[n - 1] for s in streams) - committed) * 1000
            first = (min(s.received[n - 1] for s in streams) - committed) * 1000
            label = f"warm-up {n}" if n <= warmup else f"change {n - warmup:2d}"
            print(f"  {label}: commit -> first stream {first:6.1f} ms, -> last of {len(streams)} "
                  f"streams {last:6.1f} ms", flush=True)
            (cold if n <= warmup else latencies).append(last)
            if n > warmup:
                firsts.append(first)
            await asyncio.sleep(0.3)
        ordered = sorted(latencies) or [float("nan")]
        # Server CPU per measured change (both workers, idle time between changes included: the
        # streams' keep-alives and claim refreshes), steadier than wall-clock under shared load.
        cpu = sum(cpu_seconds(pid) - cpu_before[pid] for pid in pids) if cpu_before and latencies else 0.0
        result.update({
            "worker_cpu_ms_per_change": round(cpu * 1000 / max(1, len(latencies)), 1),
            # This harness reads every stream itself: its own CPU shows how much of the figure
            # is the client's.
            "client_cpu_ms_per_change": round(
                (time.process_time() - client_before) * 1000 / max(1, len(latencies)), 1)
            if cpu_before else 0.0,
            "warmup_changes_ms": [round(c, 1) for c in cold],
            "changes": changes,
            "first_stream_p50_ms": round(statistics.median(firsts or [float("nan")]), 1),
            "p50_ms": round(statistics.median(ordered), 1),
            "p99_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))], 1),
            "max_ms": round(ordered[-1], 1),
        })
    for stream in streams:
        stream.close()
    for task in tasks:
        task.cancel()
    with contextlib.suppress(BaseException):
        await asyncio.gather(*tasks, return_exceptions=True)
    return result


def start_servers(workdir: Path, count: int, redis_url: str | None) -> list[LiveServer]:
    env = {**our_env(workdir, False, redis_url), "MCP_MAX_SESSIONS_PER_PRINCIPAL": "100000",
           "MCP_MAX_SESSIONS": "100000"}
    started: list[LiveServer] = []
    try:
        for _ in range(count):
            started.append(LiveServer(env=env, server="uvicorn", migrate=False).start())
    except BaseException:
        for server in started:
            server.stop()
        raise
    return started


def main() -> int:
    args = parse_args()
    if args.driver:
        driver()
        return 0
    with tempfile.TemporaryDirectory(prefix="mcpfanout-") as tmp:
        workdir = Path(tmp)
        print("preparing the database (migrate, load_demo) ...", flush=True)
        manage_bench_db(workdir, "migrate", "--noinput")
        manage_bench_db(workdir, "load_demo")
        reports: dict[str, object] = {}
        live = start_servers(workdir, args.workers, args.redis)
        env = {**os.environ, **our_env(workdir, False, args.redis),
               "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
        proc = subprocess.Popen([sys.executable, __file__, "--driver"], cwd=ROOT, env=env, text=True,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        try:
            print(f"redis: {args.streams} streams over {args.workers} workers, {args.changes} changes",
                  flush=True)
            reports["redis"] = run(measure([s.port for s in live], [s.process.pid for s in live if s.process],
                                           args.streams, args.changes, proc, args.warmup_changes))
        finally:
            proc.kill()
            for server in live:
                server.stop()
            clean_redis(args.redis)
        if args.memory_backend:
            print(f"memory stores: {args.streams} streams on one worker (RSS only)", flush=True)
            (single,) = start_servers(workdir, 1, None)
            try:
                assert single.process is not None
                reports["memory"] = run(measure([single.port], [single.process.pid], args.streams, 0, None))
            finally:
                single.stop()
        print(json.dumps(reports, indent=2))
        if args.json_out is not None:
            args.json_out.write_text(json.dumps(reports, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
