"""The ``http`` tool kind against a handler tool, same server, same run (issue 29: http ÷ handler
tools/call >= 0.4 and the http tool's p99 < 20 ms at c=16). Not a test; see bench/README.md.

    .venv/bin/python bench/bench_http_kind.py                     # c=16, 3 rounds of 4 s
    .venv/bin/python bench/bench_http_kind.py --rounds 5 --duration 5 --concurrency 16,64

One of our servers (uvicorn, one worker, the bench database of harness/servers.py, open mode)
serves ``echo`` (a handler tool, load_demo's) and ``http_echo`` (an ``http`` tool made here,
POSTing ``{"message": ...}`` to ``apps/json_upstream.py``, a second uvicorn process on loopback).
Every round measures the two back to back on the same server, closed loop, ``c`` keep-alive
connections, each answer checked for ``hello``; the ratio is computed within a round and the
median round is kept. Server CPU per call comes from /proc.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from harness import servers
from harness.httpclient import raw_connector
from harness.loadgen import Result, open_session, request_loop
from harness.servers import BIN, Running, ServerSpec, cpu_seconds, prepare_database

from tests.support.live_server import LiveServer

CALL = (
    b'{"jsonrpc":"2.0","id":%%d,"method":"tools/call","params":{"name":"%s","arguments":{"message":"hello"}}}'
)


def upstream() -> Running:
    argv = [
        str(BIN / "uvicorn"),
        "bench.apps.json_upstream:app",
        "--port",
        "{port}",
        "--loop",
        "uvloop",
        "--http",
        "httptools",
        "--no-access-log",
        "--log-level",
        "warning",
    ]
    return Running(ServerSpec("json-upstream", argv), Path(tempfile.gettempdir()))


def create_http_tool(workdir: Path, url: str) -> None:
    fields = {
        "name": "http_echo",
        "kind": "http",
        "http_url": url,
        "http_timeout": 10.0,
        "input_schema": {"type": "object", "properties": {"message": {"type": "string"}}},
    }
    code = (
        "import json; from registry.models import Tool; "
        f"t = Tool(**json.loads({json.dumps(json.dumps(fields))})); t.full_clean(); t.save()"
    )
    # An enabled http tool's host must be allowed when it is saved (issue 31), as when it is served.
    env = {**servers.our_env(workdir), "REGISTRY_HTTP_ALLOWED_HOSTS": "127.0.0.1"}
    servers.manage(env, "shell", "-c", code, timeout=300)


async def measure(
    url: str,
    tool: str,
    concurrency: int,
    duration: float,
    warmup: float,
    pid: int | None,
    upstream_pid: int | None,
) -> tuple[Result, float]:
    connect = raw_connector(url)
    clients = [connect() for _ in range(concurrency)]
    result = Result(f"call {tool}", concurrency)
    try:
        sessions = await asyncio.gather(*(open_session(c) for c in clients))
        cpu0, up0 = cpu_seconds(pid), cpu_seconds(upstream_pid)
        start = time.perf_counter() + warmup
        deadline = start + duration
        template = CALL % tool.encode()
        await asyncio.gather(
            *(
                request_loop(c, s, template, b"hello", start, deadline, result)
                for c, s in zip(clients, sessions, strict=True)
            )
        )
        result.elapsed = time.perf_counter() - start
        result.server_cpu = cpu_seconds(pid) - cpu0
        upstream_cpu = cpu_seconds(upstream_pid) - up0
    finally:
        for client in clients:
            await client.close()
    return result, upstream_cpu / max(result.total_requests, 1) * 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=4.0)
    parser.add_argument("--warmup", type=float, default=1.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--concurrency", default="16")
    args = parser.parse_args()
    levels = [int(c) for c in args.concurrency.split(",")]
    ok = True
    with tempfile.TemporaryDirectory(prefix="mcpbench-http-") as tmp, upstream() as json_api:
        workdir = Path(tmp)
        print("preparing our database (migrate, load_demo, seed_tools, the http tool) ...", flush=True)
        prepare_database(workdir, 100)
        create_http_tool(workdir, f"http://127.0.0.1:{json_api.port}/echo")
        env = {**servers.our_env(workdir), "MCP_AUTH": "open", "REGISTRY_HTTP_ALLOWED_HOSTS": "127.0.0.1"}
        with LiveServer(env=env, migrate=False) as ours:
            pid = ours.process.pid if ours.process else None
            upstream_pid = json_api.process.pid if json_api.process else None
            for c in levels:
                ratios: list[float] = []
                rows: dict[str, list[Result]] = {"echo": [], "http_echo": []}
                for _ in range(args.rounds):
                    for tool in rows:
                        result, up_us = asyncio.run(
                            measure(ours.url, tool, c, args.duration, args.warmup, pid, upstream_pid)
                        )
                        rows[tool].append(result)
                        error = f"  first error: {result.first_error}" if result.first_error else ""
                        print(
                            f"  {tool:<9} c={c:<3} {result.rate:8.0f} req/s  p50 {result.p50_ms:7.2f} ms"
                            f"  p99 {result.p99_ms:7.2f} ms"
                            f"  server {result.server_us_per_request:6.0f} µs/call"
                            f"  upstream {up_us:5.0f} µs/call  errors {result.errors}{error}",
                            flush=True,
                        )
                        ok &= not result.errors
                    handler, http = rows["echo"][-1], rows["http_echo"][-1]
                    ratios.append(http.rate / handler.rate if handler.rate else 0.0)
                ratio = statistics.median(ratios)
                http_p99 = statistics.median(r.p99_ms for r in rows["http_echo"])
                met = ratio >= 0.4 and http_p99 < 20.0
                ok &= met
                rounds = ", ".join(f"{r:.3f}" for r in ratios)
                print(
                    f"c={c}: http ÷ handler {ratio:.3f} (rounds: {rounds}), http p99 {http_p99:.2f} ms;"
                    f" target >= 0.4 and p99 < 20 ms: {'MET' if met else 'MISSED'}"
                )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
