"""Every issue-16 figure in one invocation, as ratios measured in the same run, printed as a table.

    .venv/bin/python bench/run_all.py                    # ~6 min: 3 rounds of 4 s rows, 10,000 streams
    .venv/bin/python bench/run_all.py --quick            # ~1.5 min: 1 round, 1,000 streams (smoke)
    .venv/bin/python bench/run_all.py --no-fanout --rounds 5 --json-out figures.json

Part one, the request path: four uvicorn processes (one worker each, the options of
``tests/support/live_server.py``, memory stores, the bench database of ``harness/servers.py``: 100 tools)
run at once and every round measures each row back to back, so the machine's load hits both sides
of a ratio alike; each row keeps the round of median rate. Closed loop, ``c`` keep-alive
connections (``harness/loadgen.py``), ``tools/call echo``:

- ``bare``: ``bench/apps/bare.py`` answering our recorded JSON responses byte for byte: the
  HTTP server's own cost for the same bytes;
- ``open``: ours, ``MCP_AUTH=open`` with the audit log and metrics off; JSON responses. Also
  ``tools/list`` (100 tools) and the stateless 2026-07-28 call on the same process;
- ``sse``: ``open`` with ``MCP_ALWAYS_STREAM=1`` (every POST answered as an SSE stream);
- ``keyed``: ``MCP_AUTH=keys`` with an API key on every request, the audit log and metrics on,
  in the fleet's production shape: the Redis spool sink (``--redis``) with a ``manage.py
  drain_audit`` process alongside writing the rows to the database. The drain's CPU per row is
  printed on its own line (moved work, not removed work); ``--audit-sink database`` runs the row
  with the in-process database sink instead, ``--compare-sinks`` adds that as a row ``keyed db``.

Server CPU per request is the process's user+system time over the row (``/proc``) divided by the
requests it answered: unlike a rate it barely moves with other processes' load. Each ratio is
computed within a round (its two sides measured back to back) and the table gives the median of
those per-round ratios; the rows table shows each row's median-rate round.

Part two, ``bench_fanout.py`` as a subprocess: ``--streams`` GET streams over two workers sharing
Redis, ``--changes`` registry changes (commit → first and → last stream), RSS per idle stream on
Redis and (one worker) on memory stores.

The table's targets are issue 16's; a figure that misses says MISSED. Not a test: nothing here is
collected by pytest, and the exit status is 1 only if a response was wrong. See bench/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from harness import servers
from harness.drain import SPOOL_PREFIX, Drain
from harness.httpclient import raw_connector
from harness.loadgen import Result, run_scenario
from harness.recording import record
from harness.servers import prepare_database

from tests.support.live_server import LiveServer

HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Row:
    label: str
    server: str
    scenario: str
    token: bool = False


ROWS = (
    Row("bare", "bare", "call"),
    Row("floor", "floor", "call"),
    Row("open", "open", "call"),
    Row("sse", "sse", "call"),
    Row("keyed", "keyed", "call", token=True),
    Row("keyed db", "keyed db", "call", token=True),  # --compare-sinks only
    Row("stateless", "open", "stateless"),
    Row("open list", "open", "list"),
)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=4.0, help="measured seconds per row")
    parser.add_argument("--warmup", type=float, default=1.0, help="unmeasured seconds before each row")
    parser.add_argument(
        "--rounds", type=int, default=3, help="repeat the rows; ratios: median of per-round ratios"
    )
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--streams", type=int, default=10000, help="fan-out: GET streams over 2 workers")
    parser.add_argument("--changes", type=int, default=10, help="fan-out: measured registry changes")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/0", help="fan-out's shared Redis")
    parser.add_argument("--no-fanout", action="store_true", help="skip part two")
    parser.add_argument("--quick", action="store_true", help="1 round of 2 s rows, 1,000 streams, 5 changes")
    parser.add_argument("--audit-sink", choices=("redis", "database"), default="redis",
                        help="the keyed row's audit sink (redis: the spool, with a drain process)")
    parser.add_argument("--compare-sinks", action="store_true",
                        help="also a 'keyed db' row: the keyed server with the database sink")
    parser.add_argument("--json-out", type=Path, help="also write the figures and every row to this file")
    args = parser.parse_args()
    if args.quick:
        args.rounds, args.duration, args.warmup, args.streams, args.changes = 1, 2.0, 0.5, 1000, 5
    return args


def request_path(args: argparse.Namespace, workdir: Path) -> dict[str, list[Result]]:
    print("preparing the database (migrate, load_demo, seed_tools, an API key) ...", flush=True)
    prepare_database(workdir, 100)
    key = servers.create_key(workdir)
    base = servers.our_env(workdir)
    plain = {**base, "MCP_AUTH": "open", "MCP_AUDIT": "0", "MCP_METRICS": "0"}
    keyed = {**base, "MCP_AUTH": "keys", "MCP_AUDIT": "1", "MCP_METRICS": "1"}
    spool = {"MCP_AUDIT_SINK": "redis", "MCP_AUDIT_REDIS_URL": args.redis, "MCP_KEY_PREFIX": SPOOL_PREFIX}
    configs = {
        "open": plain,
        "sse": {**plain, "MCP_ALWAYS_STREAM": "1"},
        "keyed": {**keyed, **(spool if args.audit_sink == "redis" else {"MCP_AUDIT_SINK": "database"})},
    }
    if args.compare_sinks:
        configs["keyed db"] = {**keyed, "MCP_AUDIT_SINK": "database"}
    rows = [row for row in ROWS if row.server in configs or row.server in ("bare", "floor")]
    with contextlib.ExitStack() as stack:
        running = {
            name: stack.enter_context(LiveServer(env=env, migrate=False)) for name, env in configs.items()
        }
        spooled = args.audit_sink == "redis"
        drain = stack.enter_context(Drain(configs["keyed"], args.redis)) if spooled else None
        recording = workdir / "bare.json"
        recording.write_text(json.dumps(asyncio.run(record(running["open"].url))))
        running["bare"] = stack.enter_context(
            LiveServer(
                env={"BENCH_BARE_RECORDING": str(recording)}, app="bench.apps.bare:application", migrate=False
            )
        )
        running["floor"] = stack.enter_context(
            LiveServer(env={}, app="bench.apps.floor:application", migrate=False)
        )
        rounds: dict[str, list[Result]] = {row.label: [] for row in rows}
        if drain is not None:
            drain.begin()
        for n in range(args.rounds):
            print(f"round {n + 1} of {args.rounds}", flush=True)
            for row in rows:
                server = running[row.server]
                pid = server.process.pid if server.process else None
                before = servers.cpu_seconds(pid)
                result = asyncio.run(
                    run_scenario(
                        raw_connector(server.url, key if row.token else None),
                        row.scenario,
                        args.concurrency,
                        args.duration,
                        args.warmup,
                        100,
                    )
                )
                result.server_cpu = servers.cpu_seconds(pid) - before
                rounds[row.label].append(result)
                error = f"  first error: {result.first_error}" if result.errors else ""
                print(
                    f"  {row.label:<10} {result.rate:8.0f} req/s  p50 {result.p50_ms:6.2f} ms  "
                    f"p99 {result.p99_ms:6.2f} ms  "
                    f"server cpu {result.server_us_per_request:5.0f} us/req{error}",
                    flush=True,
                )
        if drain is not None:
            DRAINED.update(drain.finish())
    return rounds


DRAINED: dict[str, float] = {}  # the drain's figures, once request_path ends


def fanout(args: argparse.Namespace) -> dict[str, object]:
    """bench_fanout.py's JSON report (the last thing it prints)."""
    argv = [
        sys.executable,
        str(HERE / "bench_fanout.py"),
        "--streams",
        str(args.streams),
        "--changes",
        str(args.changes),
        "--redis",
        args.redis,
        "--memory-backend",
    ]
    print(f"fan-out: {' '.join(argv[1:])}", flush=True)
    done = subprocess.run(argv, capture_output=True, text=True, timeout=1800)
    sys.stdout.write(
        "".join(
            f"  {line}\n"
            for line in done.stdout.splitlines()
            if not line.startswith((" ", "{", "}"))
            or line.startswith("  change")
            or line.startswith("  warm-up")
        )
    )
    start = done.stdout.rfind("\n{")
    if done.returncode or start < 0:
        raise RuntimeError(
            f"bench_fanout.py failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        )
    return dict(json.loads(done.stdout[start:]))


def figures(
    rounds: dict[str, list[Result]], fan: dict[str, object] | None
) -> list[tuple[str, str, str, bool | None]]:
    """(figure, value, target, met) in the issue's order; ``rounds``: every row's results, by round."""

    def ratio(a: float, b: float) -> float:
        return a / b if b else float("nan")

    out: list[tuple[str, str, str, bool | None]] = []
    if fan is not None:
        redis = fan.get("redis", {})
        memory = fan.get("memory", {})
        assert isinstance(redis, dict) and isinstance(memory, dict)
        failed = redis.get("streams_failed", 0)
        streams = redis.get("streams", 0) - failed
        p99, first = redis.get("p99_ms"), redis.get("first_stream_p50_ms")
        per_stream = [
            v for v in (redis.get("kb_per_idle_stream"), memory.get("kb_per_idle_stream")) if v is not None
        ]
        missing = redis.get("streams_missing_a_change")
        out += [
            (
                f"{streams:,} GET streams over 2 workers: commit -> last stream p99",
                f"{p99} ms"
                + (f" ({failed} streams failed to open)" if failed else "")
                + (f" ({missing} streams missed a change)" if missing else ""),
                "< 500 ms",
                bool(p99 is not None and p99 < 500 and not missing and not failed),
            ),
            (
                "commit -> first stream (p50)",
                f"{first} ms",
                "< 20 ms",
                bool(first is not None and first < 20),
            ),
            (
                "worker memory per idle GET stream (Redis / memory stores)",
                " / ".join(f"{v} KB" for v in per_stream),
                "<= 20 KB",
                bool(per_stream) and max(per_stream) <= 20,
            ),
        ]

    def per_round(value: Callable[[dict[str, Result]], float]) -> float:
        """The median over rounds of a figure computed within each round (both sides measured
        back to back), not a ratio of two medians taken from different rounds."""
        count = len(rounds["open"])
        return statistics.median(
            value({label: found[n] for label, found in rounds.items()}) for n in range(count)
        )

    def cpu(label: str, base: str = "bare") -> Callable[[dict[str, Result]], float]:
        return lambda r: ratio(r[label].server_us_per_request, r[base].server_us_per_request)

    def rate(label: str) -> Callable[[dict[str, Result]], float]:
        return lambda r: ratio(r[label].rate, r["open"].rate)

    def keyed_note() -> str:
        """The drain's CPU beside the ratio (moved, not removed), and the database sink's ratio."""
        notes = []
        if DRAINED:
            keyed_us = statistics.median(r.server_us_per_request for r in rounds["keyed"])
            notes.append(f"spool; keyed {keyed_us:.0f} us + drain {DRAINED['us_per_row']:.1f} us/row")
        if "keyed db" in rounds:
            db_us = statistics.median(r.server_us_per_request for r in rounds["keyed db"])
            notes.append(f"database sink {per_round(rate('keyed db')):.2f}, {db_us:.0f} us")
        return f" ({'; '.join(notes)})" if notes else ""

    open_cpu, keyed_cpu, floor_cpu = per_round(cpu("open")), per_round(cpu("keyed")), per_round(cpu("floor"))
    sse, keyed, stateless = per_round(rate("sse")), per_round(rate("keyed")), per_round(rate("stateless"))
    us = {
        label: statistics.median(r.server_us_per_request for r in rounds[label])
        for label in ("open", "bare", "floor")
    }
    out += [
        (
            "server CPU per JSON tools/call / bare-ASGI CPU per answer",
            f"{open_cpu:.2f}x ({us['open']:.0f} / {us['bare']:.0f} us; keyed+audit+metrics {keyed_cpu:.2f}x)",
            "<= 1.5x",
            open_cpu <= 1.5,
        ),
        (
            "  reference: the protocol floor (apps/floor.py) / bare",
            f"{floor_cpu:.2f}x ({us['floor']:.0f} / {us['bare']:.0f} us)",
            "",
            None,
        ),
        (
            "  reference: ours / the protocol floor",
            f"{per_round(cpu('open', 'floor')):.2f}x",
            "",
            None,
        ),
        ("tools/call SSE / JSON throughput", f"{sse:.2f}", ">= 0.7", sse >= 0.7),
        ("tools/call with an API key, audit and metrics on / open", f"{keyed:.2f}" + keyed_note(), ">= 0.85",
         keyed >= 0.85),
        (
            "stateless 2026-07-28 tools/call / legacy session tools/call",
            f"{stateless:.2f}",
            ">= 1.0",
            stateless >= 1.0,
        ),
    ]
    return out


def print_report(
    args: argparse.Namespace, rows: dict[str, Result], table: list[tuple[str, str, str, bool | None]]
) -> None:
    print(
        f"\nrequest path: uvicorn, 1 worker each, memory stores, c={args.concurrency}, "
        f"{args.rounds} round(s) x {args.duration:g} s, median-rate round"
    )
    print(
        f"| {'row':<10} | {'req/s':>8} | {'p50 ms':>7} | {'p99 ms':>7} | {'server CPU us/req':>17} | errors |"
    )
    print(f"|{'-' * 12}|{'-' * 10}|{'-' * 9}|{'-' * 9}|{'-' * 19}|--------|")
    for row in ROWS:
        if row.label not in rows:
            continue
        r = rows[row.label]
        print(
            f"| {row.label:<10} | {r.rate:8.0f} | {r.p50_ms:7.2f} | {r.p99_ms:7.2f} | "
            f"{r.server_us_per_request:17.0f} | {r.errors:6d} |"
        )
    if DRAINED:
        print(f"\naudit drain (manage.py drain_audit, its own process): {DRAINED['rows']:,.0f} rows, "
              f"{DRAINED['cpu_s']:.2f} s CPU, {DRAINED['us_per_row']:.1f} us CPU per row")
    width = max(len(name) for name, *_ in table)
    print(f"\n| {'figure':<{width}} | value | target | |")
    print(f"|{'-' * (width + 2)}|---|---|---|")
    for name, value, target, met in table:
        print(
            f"| {name:<{width}} | {value} | {target} | {'' if met is None else 'MET' if met else 'MISSED'} |"
        )


def main() -> int:
    args = parse_args()
    began = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="mcpbench-all-") as tmp:
        rounds = request_path(args, Path(tmp))
    rows = {label: sorted(found, key=lambda r: r.rate)[len(found) // 2] for label, found in rounds.items()}
    fan = None if args.no_fanout else fanout(args)
    table = figures(rounds, fan)
    print_report(args, rows, table)
    print(f"\n(run_all: {time.monotonic() - began:.0f} s)")
    if args.json_out:
        args.json_out.write_text(
            json.dumps(
                {
                    "figures": [{"figure": n, "value": v, "target": t, "met": m} for n, v, t, m in table],
                    "rows": {
                        label: {
                            "req_s": r.rate,
                            "p50_ms": r.p50_ms,
                            "p99_ms": r.p99_ms,
                            "server_cpu_us": r.server_us_per_request,
                            "errors": r.errors,
                        }
                        for label, r in rows.items()
                    },
                    "fanout": fan,
                    "audit_drain": DRAINED or None,
                },
                indent=2,
            )
        )
    return 1 if any(r.errors for r in rows.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
