"""What one registry change costs PostgreSQL (issue 43's capacity model): every worker rebuilds its
snapshot once per change (``registry/snapshot.build_state``: a fixed handful of queries), so a
fleet of W workers reads the registry W times per edit. Not a test (pytest never collects
``bench/``); loopback only.

    .venv/bin/python bench/bench_snapshot_build.py                       # 100, 1,000 and 10,000 tools
    .venv/bin/python bench/bench_snapshot_build.py --tools 100,1000 --builds 10

Per catalog size: a fresh PostgreSQL database on 127.0.0.1:5432 (created and dropped here),
``migrate``, ``load_demo`` and ``seed_tools --count N``; then a child process (Django set up on
that database, as a worker is) builds the state ``--builds`` times after one unmeasured build, and
reports per build: the queries (Django's own count), the worker's CPU and wall time, and the
PostgreSQL backend's CPU
(``/proc/<backend pid>/stat``: this machine runs the server, and the bench runs as a user that
may read it; otherwise the column says n/a).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PY = str(ROOT / ".venv" / "bin" / "python")
PG_ADMIN = "host=127.0.0.1 port=5432 user=postgres dbname=postgres connect_timeout=3"


def _ticks(pid: int) -> float | None:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def child(builds: int) -> None:
    """Runs in the child: Django on DATABASE_URL, the builds measured."""
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mcpsite.settings")
    django.setup()
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from registry.snapshot import build_state

    state = build_state()  # unmeasured: connects, warms the caches
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        backend = int(cursor.fetchone()[0])
    tools = len(state.snapshot.tools)
    walls, cpus, queries = [], [], []
    pg_start = _ticks(backend)
    for _ in range(builds):
        cpu0, wall0 = time.process_time(), time.perf_counter()
        with CaptureQueriesContext(connection) as captured:
            build_state()
        walls.append((time.perf_counter() - wall0) * 1000)
        cpus.append((time.process_time() - cpu0) * 1000)
        queries.append(len(captured))
    pg_end = _ticks(backend)
    # The kernel counts a process's CPU in clock ticks (10 ms here): the backend's total over the
    # builds, divided, not a median of per-build deltas that are mostly 0 or 10.
    pg_mean = None if pg_start is None or pg_end is None else (pg_end - pg_start) * 1000 / builds
    print(json.dumps({
        "tools": tools,
        "queries": statistics.median(queries),
        "wall_ms_p50": statistics.median(walls),
        "wall_ms_max": max(walls),
        "cpu_ms_p50": statistics.median(cpus),
        "pg_cpu_ms_mean": pg_mean,
    }))


def manage(env: dict[str, str], *args: str) -> None:
    subprocess.run([PY, "manage.py", *args], cwd=ROOT, env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def measure(count: int, builds: int) -> dict[str, object]:
    import psycopg

    name = f"mcpbench_snapshot_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    env = {**os.environ, "DATABASE_URL": f"postgres://postgres@127.0.0.1:5432/{name}",
           "DJANGO_SETTINGS_MODULE": "mcpsite.settings", "REDIS_URL": ""}
    try:
        manage(env, "migrate", "--noinput")
        manage(env, "load_demo")
        manage(env, "seed_tools", "--count", str(count))
        out = subprocess.run([PY, __file__, "--child", "--builds", str(builds)], cwd=ROOT, env=env,
                             check=True, capture_output=True, text=True).stdout
        return dict(json.loads(out.strip().splitlines()[-1]))
    finally:
        with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tools", default="100,1000,10000", help="seeded tools per run, comma-separated")
    parser.add_argument("--builds", type=int, default=20)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.builds)
        return 0
    print("| tools served | queries a build | worker wall p50 / max ms | worker CPU p50 ms "
          "| PostgreSQL CPU mean ms |")
    print("|---:|---:|---:|---:|---:|")
    for count in (int(c) for c in args.tools.split(",")):
        r = measure(count, args.builds)
        pg = "n/a" if r["pg_cpu_ms_mean"] is None else f"{r['pg_cpu_ms_mean']:.1f}"
        print(f"| {r['tools']} | {r['queries']:.0f} | {r['wall_ms_p50']:.1f} / {r['wall_ms_max']:.1f} | "
              f"{r['cpu_ms_p50']:.1f} | {pg} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
