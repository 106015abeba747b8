"""One ``run_all.py`` row served under load, looked at from outside with one tool: where its CPU
per request goes in the serving process, not in a harness.

    flock /tmp/bench.lock .venv/bin/python bench/profile_served.py --row open --out /tmp/open.prof
    flock /tmp/bench.lock .venv/bin/python bench/profile_served.py --row bare --out /tmp/bare.prof
    .venv/bin/python bench/profile_served.py --summary /tmp/open.prof --against /tmp/bare.prof
    flock /tmp/bench.lock .venv/bin/python bench/profile_served.py --row sse --tool strace --out /tmp/s.txt

Rows: ``bare``, ``floor``, ``open``, ``sse``, ``keyed`` (an API key, the audit spool with a
drain, metrics), as in ``run_all.py``. Tools:

- ``cprofile``: the row's app behind ``apps/profiled.py``, profiled over requests 1,000-6,000 of
  the load (uvicorn's code included); ``--summary`` prints Python calls and self time per request
  (profiled time: cProfile slows calls down, compare rows with each other, not with /proc);
- ``py-spy``: sampled stacks (``raw``, collapsed) over the load;
- ``strace``: system calls per kind (``strace -c``) over the load;
- ``none``: only the rate and the CPU per request (e.g. to compare ``--set`` variants);
- ``perf``: ``perf record -g`` (software clock: no hardware counters in a VM) over the load, for
  what the kernel and the C extensions spend (``perf report -i OUT --no-children --sort sym``).

``--set NAME=VALUE`` (repeatable) changes a setting of the row's server (``--row keyed --set
MCP_AUDIT=0``: the key without the audit log; ``MCP_AUDIT_SINK=database``: the in-process sink,
no drain). Prints the row's rate and server CPU per request (/proc), and for a drained row the
drain's CPU per row. Not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import pstats
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness import servers
from harness.drain import SPOOL_PREFIX, Drain
from harness.httpclient import raw_connector
from harness.loadgen import run_scenario
from harness.recording import record
from harness.servers import prepare_database

from tests.support.live_server import LiveServer

OUR_APP = "mcpsite.asgi:application"
WINDOW = 5000  # requests profiled by --tool cprofile (apps/profiled.py's default window)


def row_env(row: str, workdir: Path, redis: str) -> tuple[dict[str, str], str, bool]:
    """The row's server environment, its app, and whether it needs an API key."""
    plain = {**servers.our_env(workdir), "MCP_AUTH": "open", "MCP_AUDIT": "0", "MCP_METRICS": "0"}
    if row == "open":
        return plain, OUR_APP, False
    if row == "sse":
        return {**plain, "MCP_ALWAYS_STREAM": "1"}, OUR_APP, False
    if row == "keyed":
        return {**plain, "MCP_AUTH": "keys", "MCP_AUDIT": "1", "MCP_METRICS": "1", "MCP_AUDIT_SINK": "redis",
                "MCP_AUDIT_REDIS_URL": redis, "MCP_KEY_PREFIX": SPOOL_PREFIX}, OUR_APP, True
    if row == "floor":
        return {}, "bench.apps.floor:application", False
    recording = workdir / "bare.json"
    with LiveServer(env=plain, migrate=False) as ours:
        recording.write_text(json.dumps(asyncio.run(record(ours.url))))
    return {"BENCH_BARE_RECORDING": str(recording)}, "bench.apps.bare:application", False


def tool_argv(tool: str, pid: int, out: Path | None, seconds: float) -> list[str] | None:
    if tool == "py-spy":
        return [str(Path(sys.executable).parent / "py-spy"), "record", "-r", "500", "--pid", str(pid),
                "-d", str(int(seconds)), "-f", "raw", "-o", str(out), "--nonblocking"]
    if tool == "perf":
        return ["perf", "record", "-e", "cpu-clock", "-F", "999", "-g", "-p", str(pid), "-o", str(out), "--",
                "sleep", str(seconds)]
    if tool == "strace":
        return ["timeout", "-s", "INT", str(seconds), "strace", "-c", "-f", "-p", str(pid), "-o", str(out)]
    return None  # cprofile runs inside the server; none: no tool


def profile(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="mcpbench-served-") as tmp:
        workdir = Path(tmp)
        prepare_database(workdir, 100)
        env, app, keyed = row_env(args.row, workdir, args.redis)
        env |= dict(item.split("=", 1) for item in args.set)
        keyed = keyed and env.get("MCP_AUTH") != "open"
        drained = env.get("MCP_AUDIT") == "1" and env.get("MCP_AUDIT_SINK") == "redis"
        token = servers.create_key(workdir) if keyed else None
        if args.tool == "cprofile":
            env = {**env, "PROFILE_APP": app, "PROFILE_OUT": str(args.out)}
            app = "bench.apps.profiled:application"
        with contextlib.ExitStack() as stack:
            server = stack.enter_context(LiveServer(env=env, app=app, migrate=False))
            drain = stack.enter_context(Drain(env, args.redis)) if drained else None
            pid = server.process.pid if server.process else 0
            connect = raw_connector(server.url, token)
            if args.tool != "cprofile":
                asyncio.run(run_scenario(connect, "call", 16, 1.0, 0.5, 100))  # warm, unmeasured
            if drain is not None:
                drain.begin()  # its own start-up is not per row
            argv = tool_argv(args.tool, pid, args.out, args.duration)
            spy = subprocess.Popen(argv, stdout=subprocess.DEVNULL) if argv else None
            time.sleep(0.5 if spy else 0)
            before = servers.cpu_seconds(pid)
            result = asyncio.run(run_scenario(connect, "call", 16, args.duration - 1.0, 0.0, 100))
            cpu = servers.cpu_seconds(pid) - before
            per = cpu / max(result.total_requests, 1) * 1e6
            print(f"{args.row}: {result.rate:.0f} req/s, server CPU {per:.1f} us per request, "
                  f"{result.errors} errors")
            if spy is not None:
                spy.wait(60)
            if drain is not None:
                print(f"drain: {drain.finish()}")
            if args.tool == "cprofile" and result.total_requests < 6000:
                print(f"only {result.total_requests} requests: raise --duration for a full cprofile window")
    if args.tool == "cprofile" and args.out is not None and args.out.exists():
        summary(args.out, None, args.top)


def summary(path: Path, against: Path | None, top: int) -> None:
    """Calls and profiled self time per request, the functions of most self time first."""
    def load(p: Path) -> dict[tuple[str, int, str], tuple[float, float]]:
        stats = pstats.Stats(str(p)).stats  # type: ignore[attr-defined]
        root = str(servers.ROOT) + "/"
        return {(f.split("site-packages/")[-1].split(root)[-1], line, name):
                (calls / WINDOW, own / WINDOW * 1e6)
                for (f, line, name), (_, calls, own, _, _) in stats.items()}

    for label, found in ((path.name, load(path)), *(((against.name, load(against)),) if against else ())):
        calls = sum(c for c, _ in found.values())
        own = sum(t for _, t in found.values())
        print(f"\n{label}: {calls:.0f} Python calls, {own:.1f} us of profiled self time per request")
        print("| calls/req | self us/req | function |\n| --- | --- | --- |")
        for (file, line, name), (count, spent) in sorted(found.items(), key=lambda kv: -kv[1][1])[:top]:
            print(f"| {count:.1f} | {spent:.2f} | {file}:{line} {name} |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--row", choices=("bare", "floor", "open", "sse", "keyed"), default="open")
    parser.add_argument("--tool", default="cprofile",
                        choices=("cprofile", "py-spy", "strace", "perf", "none"))
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="another setting for the row's server (repeatable)")
    parser.add_argument("--out", type=Path, help="where the tool writes (stats, stacks, counts)")
    parser.add_argument("--duration", type=float, default=5.0, help="seconds of load (and of the tool)")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/0", help="the keyed row's spool")
    parser.add_argument("--summary", type=Path, help="print a cprofile stats file's summary, run nothing")
    parser.add_argument("--against", type=Path, help="with --summary: a second stats file after it")
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    if args.summary:
        summary(args.summary, args.against, args.top)
        return 0
    if args.out is None and args.tool != "none":
        parser.error("--out is required unless --summary or --tool none")
    profile(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
