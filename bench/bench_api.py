"""The REST management API under load, and ``/mcp`` tools/call on the same server in the same run.

    .venv/bin/python bench/bench_api.py                  # c=8, 5 s per row, 3 rounds
    .venv/bin/python bench/bench_api.py --duration 3 --rounds 1

One uvicorn worker (memory stores, SQLite: migrate, load_demo, 100 tools), a superuser and a
management API token. Every round measures, back to back so a change in the machine's load hits
them alike, and keeps the median-rate round per row:

- ``mcp tools/call, API present`` / ``…, no API``: harness/loadgen.py's ``call`` scenario on ``/mcp``
  (JSON mode) against this server and against a second one whose settings leave the API out
  (``apps/noapi_settings.py``), one after the other: the API's presence costs ``/mcp`` nothing;
- ``api GET tools page=100``: ``GET /api/v1/tools/?page_size=100`` (a page of 100 tools);
- ``api PATCH tool``: ``PATCH /api/v1/tools/<id>/`` changing the description, each client its own
  tool (validation, the versioned save, the publish, and the snapshot rebuild it causes);
- ``mcp tools/call after PATCHes``: ``call`` again right after the PATCH row: every committed
  change makes the worker rebuild its registry snapshot, and a burst of changes leaves a
  backlog of rebuilds that ``/mcp`` shares the CPU with for a few seconds.

API requests carry ``Authorization: Bearer <token>``. The number of SQL queries of each API
request is counted once, in-process (Django's test client on the same database, the same token).
Not a test: pytest never collects ``bench/``. Loopback only; bounded in time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from harness import servers
from harness.httpclient import RawConnection
from harness.loadgen import Result, run_scenario
from harness.servers import prepare_database

from tests.support.live_server import LiveServer

Request = Callable[[int, int], tuple[str, str, bytes | None]]  # (worker, n) -> method, path, body


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=5.0)
    parser.add_argument("--warmup", type=float, default=1.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=8)
    return parser.parse_args(argv)


async def api_load(host: str, port: int, token: str, make: Request, concurrency: int,
                   duration: float, warmup: float) -> Result:
    """Closed loop like harness/loadgen.py: each worker sends its next request when the last is answered."""
    result = Result("api", concurrency)
    start = time.perf_counter() + warmup
    deadline = start + duration
    headers = {"Authorization": f"Bearer {token}"}

    async def worker(index: int) -> None:
        connections: dict[str, RawConnection] = {}
        n = 0
        try:
            while (began := time.perf_counter()) < deadline:
                method, path, body = make(index, n)
                n += 1
                connection = connections.setdefault(path, RawConnection(host, port, path))
                response = await connection.send(method, body, headers)
                if began >= start:
                    if response.status == 200:
                        result.latencies.append(time.perf_counter() - began)
                    else:
                        result.note_error(response)
        finally:
            for connection in connections.values():
                await connection.close()

    await asyncio.gather(*(worker(i) for i in range(concurrency)))
    result.elapsed = time.perf_counter() - start
    return result


def count_queries(workdir: Path, token: str, tool_id: int) -> dict[str, int]:
    """Queries of one API request of each kind, in this process, on the bench database."""
    os.environ.update(servers.our_env(workdir))
    import django

    django.setup()
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    client = Client(HTTP_AUTHORIZATION=f"Bearer {token}", HTTP_HOST="127.0.0.1")
    counts = {}
    for label, call in (
        ("api GET tools page=100", lambda: client.get("/api/v1/tools/?page_size=100")),
        ("api PATCH tool", lambda: client.patch(f"/api/v1/tools/{tool_id}/", json.dumps(
            {"description": "counted"}), content_type="application/json")),
    ):
        with CaptureQueriesContext(connection) as captured:
            status = call().status_code
        assert status == 200, (label, status)
        counts[label] = len(captured)
    return counts


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    rows: dict[str, list[Result]] = {}
    with tempfile.TemporaryDirectory(prefix="mcpbench-api-") as tmp:
        workdir = Path(tmp)
        print("preparing the database (migrate, load_demo, seed_tools, a token) ...", flush=True)
        prepare_database(workdir, 100)
        superuser = (
            "from django.contrib.auth.models import User; "
            "User.objects.create_superuser('bench', '', 'bench-password')"
        )
        servers.manage_bench_db(workdir, "shell", "-c", superuser)
        mint = ["create_management_token", "--user", "bench", "--name", "bench"]
        token = servers.manage_bench_db(workdir, *mint).strip()
        first_pks = (
            "from registry.models import Tool; "
            "print(*Tool.objects.order_by('pk').values_list('pk', flat=True)[:64])"
        )
        listed = servers.manage_bench_db(workdir, "shell", "-c", first_pks)
        ids = [int(i) for i in listed.splitlines()[-1].split()]
        env = {**servers.our_env(workdir), "API_THROTTLE_USER": "100000000/minute"}
        server = LiveServer(env=env, migrate=False).start()
        control = LiveServer(env={**env, "DJANGO_SETTINGS_MODULE": "bench.apps.noapi_settings"},
                             migrate=False).start()
        try:
            host, port = server.host, server.port
            kinds: dict[str, Request] = {
                "api GET tools page=100": lambda w, n: ("GET", "/api/v1/tools/?page_size=100", None),
                "api PATCH tool": lambda w, n: ("PATCH", f"/api/v1/tools/{ids[w]}/",
                                                json.dumps({"description": f"bench {w} {n}"}).encode()),
            }
            calls = {"mcp tools/call, API present": server, "mcp tools/call, no API": control,
                     "mcp tools/call after PATCHes": server}
            for n in range(args.rounds):
                for label in [*list(calls)[:2], *kinds, list(calls)[2]]:
                    if label in calls:
                        target = calls[label]
                        result = asyncio.run(run_scenario(
                            lambda t=target: RawConnection(t.host, t.port, "/mcp"), "call",
                            args.concurrency, args.duration, args.warmup, 100))
                    else:
                        result = asyncio.run(api_load(host, port, token, kinds[label], args.concurrency,
                                                      args.duration, args.warmup))
                    rows.setdefault(label, []).append(result)
                    print(f"  round {n + 1} {label:<30} c={args.concurrency} {result.rate:8.0f} req/s  "
                          f"p50 {result.p50_ms:6.2f} ms  p99 {result.p99_ms:6.2f} ms  errors {result.errors}"
                          + (f" ({result.first_error})" if result.errors else ""), flush=True)
        finally:
            server.stop()
            control.stop()
            if any(r.errors for results in rows.values() for r in results):
                print("server log (tail):\n" + "\n".join(server.last_log.splitlines()[-30:]))
        queries = count_queries(workdir, token, ids[0])
    print(f"\n{'row':<30} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'queries':>8}"
          f"   (median of {args.rounds})")
    for label, results in rows.items():
        best = sorted(results, key=lambda r: r.rate)[len(results) // 2]
        print(f"{label:<30} {best.rate:8.0f} {best.p50_ms:8.2f} {best.p99_ms:8.2f} "
              f"{queries.get(label, '-'):>8}")
    present, absent = rows["mcp tools/call, API present"], rows["mcp tools/call, no API"]
    print(f"\ntools/call with the API / without it: "
          f"{statistics.median(r.rate for r in present) / statistics.median(r.rate for r in absent):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
