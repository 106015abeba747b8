"""tools/call with an access token of the built-in authorization server against open mode, same run
(issue 25: >= 0.85x open mode's req/s). Not a test; see bench/README.md.

    .venv/bin/python bench/bench_oauth_server.py                   # c=16, JSON, 3 rounds of 5 s
    .venv/bin/python bench/bench_oauth_server.py --concurrency 16,64 --rounds 5

Two of our servers (uvicorn, one worker each, the bench database of harness/servers.py, audit log
on) run at once: ``MCP_AUTH=open`` and ``MCP_AUTH=oauth`` with ``MCP_OAUTH_ISSUER=self``. The token
comes from the real flow (DCR, sign-in, consent, PKCE exchange: tests/support/oauth_flow.py): an
ES256 JWT verified on /mcp against the JWKS the server holds in memory, with no database query
per request. Every row measures both back to back and keeps the median round.

Token issuance (issue 38 "token issuance unchanged"): ``--refreshes`` refresh grants, one after
another over one keep-alive connection, each rotating the refresh token it sends (the token
endpoint's whole path: rate limiter, client check, the user's grant, a new JWT and refresh row).
The endpoint's rate limit is lifted for the run.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
import tempfile
import time
from pathlib import Path

import httpx
from harness import servers
from harness.loadgen import Result, json_calls
from harness.servers import prepare_database

from tests.support.live_server import LiveServer
from tests.support.manage import manage
from tests.support.oauth_flow import OAuthFlow, user


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=5.0)
    parser.add_argument("--warmup", type=float, default=1.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--concurrency", default="16")
    parser.add_argument("--tools", type=int, default=100)
    parser.add_argument("--refreshes", type=int, default=300, help="refresh grants timed (0: none)")
    args = parser.parse_args()
    load = (args.duration, args.warmup, args.tools)  # per row: seconds measured, warm-up, tools
    levels = [int(c) for c in args.concurrency.split(",")]
    with tempfile.TemporaryDirectory(prefix="mcpbench-oauth-") as tmp, contextlib.ExitStack() as stack:
        workdir = Path(tmp)
        print("preparing our database (migrate, load_demo, seed_tools, a user) ...", flush=True)
        prepare_database(workdir, args.tools)
        # The sign-in and consent pages (admin look) need collected static files with DEBUG off.
        env = {**servers.our_env(workdir), "DJANGO_STATIC_ROOT": str(workdir / "static")}
        manage(env, "collectstatic", "--noinput", "-v0", timeout=300)
        user(lambda *argv: servers.manage_bench_db(workdir, *argv), "bench", "bench-password-1")
        port = servers.free_port()
        oauth_env = {
            **env,
            "MCP_AUTH": "oauth",
            "MCP_OAUTH_ISSUER": "self",
            "MCP_RESOURCE_URL": f"http://127.0.0.1:{port}/mcp",
            "MCP_OAUTH_ACCESS_TOKEN_SECONDS": "3600",
            "MCP_OAUTH_TOKEN_RATE": "1000000/60",  # the refresh row measures the grant, not the limit
        }
        modes: dict[str, tuple[LiveServer, str | None]] = {
            "open": (LiveServer(env={**env, "MCP_AUTH": "open"}, migrate=False), None),
        }
        oauth = LiveServer(env=oauth_env, port=port, migrate=False)
        for server in (modes["open"][0], oauth):
            stack.enter_context(server)
        flow = OAuthFlow(oauth.base_url, "bench", "bench-password-1")
        granted = flow.access_token()
        token = str(granted["access_token"])
        flow.close()
        issued = refresh_grants(oauth.base_url, granted, args.refreshes) if args.refreshes else None
        modes["built-in"] = (oauth, token)
        rows: dict[tuple[str, int], Result] = {}
        for c in levels:
            rounds: dict[str, list[Result]] = {name: [] for name in modes}
            for _ in range(args.rounds):
                for name, (server, credential) in modes.items():
                    result = asyncio.run(json_calls(server.url, c, *load, credential))
                    rounds[name].append(result)
                    error = f"  first error: {result.first_error}" if result.first_error else ""
                    print(
                        f"  {name:<8} c={c:<3} {result.rate:8.0f} req/s  p50 {result.p50_ms:6.2f} ms  "
                        f"p99 {result.p99_ms:6.2f} ms  errors {result.errors}{error}",
                        flush=True,
                    )
            for name, measured in rounds.items():
                rows[(name, c)] = sorted(measured, key=lambda r: r.rate)[len(measured) // 2]
    print("\ntools/call JSON, audit on      req/s   p50 ms   p99 ms   vs open (req/s)")
    ok = True
    for c in levels:
        base = rows[("open", c)]
        for name in modes:
            r = rows[(name, c)]
            share = r.rate / base.rate if base.rate else 0.0
            ok &= name == "open" or share >= 0.85
            print(f"  {name:<8} c={c:<3}  {r.rate:14.0f} {r.p50_ms:8.2f} {r.p99_ms:8.2f}   {share:5.2f}x")
    print(f"target built-in token >= 0.85x open: {'MET' if ok else 'MISSED'}")
    if issued is not None:
        count, p50, p99, rate = issued
        print(
            f"token issuance: {count} refresh grants, {rate:.0f}/s one at a time, "
            f"p50 {p50:.2f} ms, p99 {p99:.2f} ms"
        )
    return 0 if ok and not any(r.errors for r in rows.values()) else 1


def refresh_grants(base_url: str, granted: dict[str, object], count: int) -> tuple[int, float, float, float]:
    """``count`` refresh grants in a row, each with the refresh token the last one returned:
    (count, p50 ms, p99 ms, grants per second)."""
    refresh, client_id = str(granted["refresh_token"]), str(granted["client_id"])
    timings: list[float] = []
    with httpx.Client(base_url=base_url, timeout=10.0) as client:
        started = time.perf_counter()
        for _ in range(count):
            sent = time.perf_counter()
            answer = client.post(
                "/oauth/token/",
                data={"grant_type": "refresh_token", "refresh_token": refresh, "client_id": client_id},
            )
            timings.append((time.perf_counter() - sent) * 1000)
            if answer.status_code != 200:
                raise SystemExit(f"refresh grant answered {answer.status_code}: {answer.text[:300]}")
            refresh = str(answer.json()["refresh_token"])
        elapsed = time.perf_counter() - started
    timings.sort()
    p99 = timings[min(len(timings) - 1, int(len(timings) * 0.99))]
    return count, timings[len(timings) // 2], p99, count / elapsed


if __name__ == "__main__":
    sys.exit(main())
