"""tools/call with tracing off and on, against the same server without any tracing code, same run
(issue 30: off / no tracing code >= 0.98, on at a 100 % sampler exporting to a loopback OTLP
collector / no tracing code >= 0.8). Not a test; see bench/README.md.

    .venv/bin/python bench/bench_tracing.py --without /path/to/a/checkout/before/tracing
    .venv/bin/python bench/bench_tracing.py --rounds 5 --concurrency 16

Three of our servers (uvicorn, one worker each, the bench database of harness/servers.py, open
mode, audit off) run at once: ``none`` from the ``--without`` checkout (its own .venv; without it
the row is left out), ``off`` (this checkout, no OTEL_* variable) and ``on`` (``OTEL_TRACES_SAMPLER=
always_on``, OTLP/HTTP to a receiver in this process that decodes every batch,
tests/support/otlp.py). Every round measures them back to back; the median round is kept.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import sys
import tempfile
from pathlib import Path

from harness import servers
from harness.loadgen import Result, json_calls
from harness.servers import prepare_database

from tests.support.live_server import LiveServer
from tests.support.otlp import OtlpReceiver


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--without", type=Path, help="a checkout without tracing code (with its .venv)")
    parser.add_argument("--duration", type=float, default=5.0)
    parser.add_argument("--warmup", type=float, default=1.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--tools", type=int, default=100)
    parser.add_argument("--ratio", type=float, help="sample this share of traces (default: every one)")
    args = parser.parse_args()
    load = (args.duration, args.warmup, args.tools)  # per row: seconds measured, warm-up, tools
    with (
        tempfile.TemporaryDirectory(prefix="mcpbench-tracing-") as tmp,
        OtlpReceiver() as otlp,
        contextlib.ExitStack() as stack,
    ):
        workdir = Path(tmp)
        print("preparing our database (migrate, load_demo, seed_tools) ...", flush=True)
        prepare_database(workdir, args.tools)
        env = {**servers.our_env(workdir), "MCP_AUTH": "open", "MCP_AUDIT": "0"}
        sampler = {"OTEL_TRACES_SAMPLER": "always_on"}
        if args.ratio is not None:
            sampler = {
                "OTEL_TRACES_SAMPLER": "parentbased_traceidratio",
                "OTEL_TRACES_SAMPLER_ARG": str(args.ratio),
            }
        traced = {**env, "OTEL_EXPORTER_OTLP_ENDPOINT": otlp.endpoint, **sampler}
        modes: dict[str, LiveServer] = {}
        if args.without is not None:
            without = args.without.resolve()
            modes["none"] = LiveServer(
                env=env, migrate=False, project_dir=without, python=str(without / ".venv" / "bin" / "python")
            )
        modes["off"] = LiveServer(env=env, migrate=False)
        modes["on"] = LiveServer(env=traced, migrate=False)
        for server in modes.values():
            stack.enter_context(server)
        rounds: dict[str, list[Result]] = {name: [] for name in modes}
        for _ in range(args.rounds):
            for name, server in modes.items():
                result = asyncio.run(json_calls(server.url, args.concurrency, *load))
                rounds[name].append(result)
                print(
                    f"  {name:<4} {result.rate:8.0f} req/s  p50 {result.p50_ms:6.2f} ms  "
                    f"p99 {result.p99_ms:6.2f} ms  errors {result.errors}",
                    flush=True,
                )
        rows = {
            name: sorted(measured, key=lambda r: r.rate)[len(measured) // 2]
            for name, measured in rounds.items()
        }
        exported = len(otlp.spans)
    base_name = "none" if "none" in rows else "off"
    # Each ratio within its round (the rows of a round ran back to back), then the median of them.
    shares = {
        name: statistics.median(r.rate / b.rate for r, b in zip(rounds[name], rounds[base_name], strict=True))
        for name in rounds
    }
    print(
        f"\ntools/call JSON, c={args.concurrency}   req/s   p50 ms   p99 ms   vs {base_name} (median round)"
    )
    for name, r in rows.items():
        print(f"  {name:<4} {r.rate:14.0f} {r.p50_ms:8.2f} {r.p99_ms:8.2f}   {shares[name]:5.2f}x")
    print(f"spans received by the loopback collector: {exported:,}")
    if "none" in rows:
        print(f"target off / none >= 0.98: {shares['off']:.2f}; on / none >= 0.8: {shares['on']:.2f}")
    return 0 if not any(r.errors for r in rows.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
