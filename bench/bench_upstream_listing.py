"""``tools/list`` with 20 upstreams of 50 tools each mirrored and kept current, against the same
number of local tools and no upstream, same run (issue 40: "20 upstreams of 50 tools synced and
served with tools/list unchanged beyond noise"). Not a test; see bench/README.md.

    .venv/bin/python bench/bench_upstream_listing.py                  # c=16, 3 rounds of 4 s
    .venv/bin/python bench/bench_upstream_listing.py --upstreams 20 --tools 50 --rounds 5

Two of our servers (uvicorn, one worker each, a bench database each, open mode):

- ``local``: load_demo plus seeded tools, as many as the other serves, no upstream;
- ``upstreams``: load_demo plus ``--upstreams`` ``Upstream`` rows synced for real
  (``sync_upstreams``) from ``bench/apps/many_upstreams.py`` (one process of that many official
  SDK servers of ``--tools`` tools each), served while its keeper holds every upstream's listen
  stream (``subscriptions/listen``) under its lease and syncs each once on connect.

Each round measures the two back to back (closed loop, ``c`` keep-alive connections, the first page
of ``tools/list``); the ratio upstreams ÷ local is taken within a round and the median round kept.
Then the idle cost of keeping the upstreams current: each server's CPU over ``--idle`` seconds of
no requests.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from harness import servers
from harness.loadgen import Result, closed_loop
from harness.servers import cpu_seconds, prepare_database

from tests.support.live_server import LiveServer
from tests.support.manage import ROOT, manage
from tests.support.ports import free_port

LIST = b'{"jsonrpc":"2.0","id":%d,"method":"tools/list"}'
ENABLED = ("from registry.models import Tool; "
           "print(Tool.objects.filter(enabled=True, upstream_missing=False).count())")


async def measure(url: str, label: str, concurrency: int, duration: float, warmup: float, pid: int) -> Result:
    """``tools/list`` (its first page) in a closed loop on ``concurrency`` sessions; server CPU from /proc."""
    return await closed_loop(url, LIST, b'"tools"', label, concurrency, duration, warmup,
                             lambda: cpu_seconds(pid))


def start_upstreams(count: int, tools: int) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    command = [sys.executable, str(ROOT / "bench" / "apps" / "many_upstreams.py"), "--port", str(port),
               "--servers", str(count), "--tools", str(tools)]
    process = subprocess.Popen(command, cwd=ROOT, start_new_session=True, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            httpx.get(f"{base}/u0/mcp", timeout=0.5)
            return process, base
        except httpx.TransportError:
            time.sleep(0.1)
    raise SystemExit("the upstreams did not start")


def synced_since(workdir: Path, count: int, moment: float) -> bool:
    script = ("from registry.models import Upstream; "
              f"print(Upstream.objects.filter(last_sync_at__gte=__import__('datetime').datetime.fromtimestamp("
              f"{moment}, __import__('datetime').timezone.utc)).count())")
    return int(servers.manage_bench_db(workdir, "shell", "-c", script).split()[-1]) >= count


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--upstreams", type=int, default=20)
    parser.add_argument("--tools", type=int, default=50)
    parser.add_argument("--duration", type=float, default=4.0)
    parser.add_argument("--warmup", type=float, default=1.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--idle", type=float, default=10.0)
    args = parser.parse_args()
    process, base = start_upstreams(args.upstreams, args.tools)
    try:
        with tempfile.TemporaryDirectory(prefix="mcpbench-uplist-") as tmp:
            local_dir, mirrored_dir = Path(tmp) / "local", Path(tmp) / "upstreams"
            local_dir.mkdir()
            mirrored_dir.mkdir()
            print("preparing the upstreams' database (migrate, load_demo, rows, sync_upstreams) ...",
                  flush=True)
            servers.manage_bench_db(mirrored_dir, "migrate", "--noinput")
            servers.manage_bench_db(mirrored_dir, "load_demo")
            rows = "; ".join(
                f"Upstream.objects.create(name='u{i}', prefix='u{i}', url='{base}/u{i}/mcp', "
                "transport='streamable-http', timeout=30, connect_timeout=5)" for i in range(args.upstreams))
            env = {"REGISTRY_HTTP_ALLOWED_HOSTS": "127.0.0.1"}
            manage(servers.our_env(mirrored_dir) | env, "shell", "-c",
                           f"from registry.models import Upstream; {rows}", timeout=300)
            manage(servers.our_env(mirrored_dir) | env, "sync_upstreams", timeout=600)
            total = int(servers.manage_bench_db(mirrored_dir, "shell", "-c", ENABLED).split()[-1])
            print(f"  {total} enabled tools ({args.upstreams * args.tools} mirrored)", flush=True)
            print("preparing the local database (migrate, load_demo, seed_tools) ...", flush=True)
            prepare_database(local_dir, total)
            started = time.time()
            common = {"MCP_AUTH": "open", **env}
            with (
                LiveServer(env={**servers.our_env(local_dir), **common}, migrate=False) as local,
                LiveServer(env={**servers.our_env(mirrored_dir), **common}, migrate=False) as mirrored,
            ):
                deadline = time.monotonic() + 180
                while not synced_since(mirrored_dir, args.upstreams, started):  # the syncs on connect
                    if time.monotonic() > deadline:
                        raise SystemExit("the keeper did not sync every upstream within 180 s")
                    time.sleep(1.0)
                print(f"  every upstream's listen stream held and synced {time.time() - started:.1f} s "
                      "after start", flush=True)
                pids = {"local": local.process.pid, "upstreams": mirrored.process.pid}  # type: ignore[union-attr]
                urls = {"local": local.url, "upstreams": mirrored.url}
                c = args.concurrency
                ratios = []
                for _ in range(args.rounds):
                    row = {label: asyncio.run(measure(urls[label], label, c, args.duration, args.warmup,
                                                      pids[label])) for label in ("local", "upstreams")}
                    for label, result in row.items():
                        print(f"  {label:<10} c={c:<3} {result.rate:8.0f} req/s  p50 {result.p50_ms:7.2f} ms"
                              f"  p99 {result.p99_ms:7.2f} ms"
                              f"  server {result.server_us_per_request:6.0f} µs/list"
                              f"  errors {result.errors}", flush=True)
                    ratios.append(row["upstreams"].rate / row["local"].rate if row["local"].rate else 0.0)
                ratio = statistics.median(ratios)
                print(f"c={c}: upstreams ÷ local tools/list rate {ratio:.3f} "
                      f"(rounds: {', '.join(f'{r:.3f}' for r in ratios)})", flush=True)
                before = {label: cpu_seconds(pid) for label, pid in pids.items()}
                time.sleep(args.idle)  # the measured window: nobody sends a request
                for label, pid in pids.items():
                    used = cpu_seconds(pid) - before[label]
                    print(f"  idle {label:<10} {used * 1000 / args.idle:6.1f} ms CPU per second", flush=True)
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
