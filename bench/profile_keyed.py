"""py-spy of one ``keyed`` server (run_all.py's: API key, audit spool + drain, metrics) under
loadgen's tools/call load: where the serving process's CPU goes per call.

    flock /tmp/bench.lock .venv/bin/python bench/profile_keyed.py --out /tmp/keyed.txt [--audit-sink database]

Prints the server's CPU per call and writes py-spy's raw (collapsed) stacks to ``--out``.
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import servers
from loadgen import run_scenario
from run_all import SPOOL_PREFIX, Drain, connector

from bench import prepare_database
from tests.support.live_server import LiveServer


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--duration", type=float, default=6.0)
    parser.add_argument("--audit-sink", choices=("redis", "database"), default="redis")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/0")
    parser.add_argument("--no-profile", action="store_true", help="only the CPU per call")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="another setting for the server (e.g. MCP_AUDIT=0, MCP_AUTH=open)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="mcpbench-keyed-") as tmp:
        workdir = Path(tmp)
        prepare_database(workdir, 100)
        key = servers.create_key(workdir)
        env = {**servers.our_env(workdir), "MCP_AUTH": "keys", "MCP_AUDIT": "1", "MCP_METRICS": "1"}
        if args.audit_sink == "redis":
            env |= {"MCP_AUDIT_SINK": "redis", "MCP_AUDIT_REDIS_URL": args.redis,
                    "MCP_KEY_PREFIX": SPOOL_PREFIX}
        else:
            env["MCP_AUDIT_SINK"] = "database"
        env |= dict(item.split("=", 1) for item in args.set)
        if env["MCP_AUTH"] == "open":
            key = None  # type: ignore[assignment]
        with LiveServer(env=env, migrate=False) as server:
            spooled = args.audit_sink == "redis" and env["MCP_AUDIT"] == "1"
            drain = Drain(env, args.redis).__enter__() if spooled else None
            try:
                pid = server.process.pid if server.process else 0
                connect = connector(server.url, key)
                asyncio.run(run_scenario(connect, "call", 16, 2.0, 0.5, 100))  # warm
                spy = None
                if not args.no_profile:
                    argv = [str(Path(sys.executable).parent / "py-spy"), "record", "-r", "500", "--pid",
                            str(pid), "-d", str(int(args.duration)), "-f", "raw", "-o", str(args.out),
                            "--nonblocking"]
                    spy = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                    time.sleep(0.5)
                before = servers.cpu_seconds(pid)
                result = asyncio.run(run_scenario(connect, "call", 16, args.duration - 1.0, 0.0, 100))
                cpu = servers.cpu_seconds(pid) - before
                per_call = cpu / max(result.total_requests, 1) * 1e6
                print(f"{result.rate:.0f} req/s, server CPU {per_call:.1f} us per call")
                if spy is not None:
                    spy.wait(60)
                if drain is not None:
                    print(drain.finish())
            finally:
                if drain is not None:
                    drain.__exit__(None, None, None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
