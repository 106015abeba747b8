"""tools/call with an API key and with a JWT against open mode, same run, audit log on (issue 11:
each >= 0.85x open mode's req/s). Not a test; see bench/README.md.

    .venv/bin/python bench/bench_auth.py                         # c=16, JSON, 3 rounds of 5 s
    .venv/bin/python bench/bench_auth.py --concurrency 16,64 --rounds 5

Three of our servers (uvicorn, one worker each, the bench database of harness/servers.py with the audit log
written to it) run at once: ``MCP_AUTH=open``, ``keys`` (a key made with ``mcp_keys create``) and
``oauth`` (RS256 tokens from a key made here, the JWKS served by this process on loopback). Every
row measures the three back to back (the machine's load hits them alike) and keeps the median
round.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
import tempfile
import time
from pathlib import Path

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa
from harness import servers
from harness.jwks import serve_jwks
from harness.loadgen import Result, json_calls
from harness.servers import prepare_database

from tests.support.live_server import LiveServer


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=5.0)
    parser.add_argument("--warmup", type=float, default=1.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--concurrency", default="16")
    parser.add_argument("--tools", type=int, default=100)
    args = parser.parse_args()
    load = (args.duration, args.warmup, args.tools)  # per row: seconds measured, warm-up, tools
    levels = [int(c) for c in args.concurrency.split(",")]
    private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    issuer, jwks_server = serve_jwks(private)
    with tempfile.TemporaryDirectory(prefix="mcpbench-auth-") as tmp, contextlib.ExitStack() as stack:
        workdir = Path(tmp)
        print("preparing our database (migrate, load_demo, seed_tools, a key) ...", flush=True)
        prepare_database(workdir, args.tools)
        key = servers.create_key(workdir)
        env = servers.our_env(workdir)
        oauth_port = servers.free_port()
        resource = f"http://127.0.0.1:{oauth_port}/mcp"
        now = int(time.time())
        token = jwt.encode({"iss": issuer, "sub": "bench", "aud": resource, "iat": now, "exp": now + 3600,
                            "scope": "mcp"}, private, algorithm="RS256", headers={"kid": "bench"})
        modes = {
            "open": (LiveServer(env={**env, "MCP_AUTH": "open"}, migrate=False), None),
            "key": (LiveServer(env={**env, "MCP_AUTH": "keys"}, migrate=False), key),
            "jwt": (LiveServer(env={**env, "MCP_AUTH": "oauth", "MCP_OAUTH_ISSUER": issuer,
                                    "MCP_OAUTH_JWKS_URL": f"{issuer}/jwks", "MCP_RESOURCE_URL": resource},
                               port=oauth_port, migrate=False), token),
        }
        for server, _ in modes.values():
            stack.enter_context(server)
        rows: dict[tuple[str, int], Result] = {}
        for c in levels:
            rounds: dict[str, list[Result]] = {name: [] for name in modes}
            for _ in range(args.rounds):
                for name, (server, credential) in modes.items():
                    result = asyncio.run(json_calls(server.url, c, *load, credential))
                    rounds[name].append(result)
                    error = f"  first error: {result.first_error}" if result.first_error else ""
                    print(f"  {name:<5} c={c:<3} {result.rate:8.0f} req/s  p50 {result.p50_ms:6.2f} ms  "
                          f"p99 {result.p99_ms:6.2f} ms  errors {result.errors}{error}", flush=True)
            for name, measured in rounds.items():
                rows[(name, c)] = sorted(measured, key=lambda r: r.rate)[len(measured) // 2]
        audited = servers.manage_bench_db(workdir, "shell", "-c",
                                 "from access.models import AuditRecord; print(AuditRecord.objects.count())")
    jwks_server.shutdown()
    print("\ntools/call JSON, audit on   req/s   p50 ms   p99 ms   vs open (req/s)")
    ok = True
    for c in levels:
        base = rows[("open", c)]
        for name in modes:
            r = rows[(name, c)]
            share = r.rate / base.rate if base.rate else 0.0
            ok &= name == "open" or share >= 0.85
            print(f"  {name:<5} c={c:<3}  {r.rate:14.0f} {r.p50_ms:8.2f} {r.p99_ms:8.2f}   {share:5.2f}x")
    print(f"audit rows written: {audited.split()[-1]}")
    print(f"target key and jwt >= 0.85x open: {'MET' if ok else 'MISSED'}")
    return 0 if ok and not any(r.errors for r in rows.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
