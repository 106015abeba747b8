"""Fan-out per endpoint (issue 39 item 4): what a change costs the writers when it names the
endpoint it reaches, against one that reaches every session. Not a test (pytest never collects
``bench/``); loopback only; bounded (every wait has a deadline). See bench/README.md.

    .venv/bin/python bench/bench_fanout_endpoints.py                      # 10,000 sessions, 200 endpoints
    .venv/bin/python bench/bench_fanout_endpoints.py --sessions 2000 --endpoints 40 --rounds 3

In-process, against a private ``redis-server`` on a free loopback port (so Redis' ``INFO
commandstats`` counts this bench's commands only; ``--redis URL`` uses another, whose other
clients then count too): ``--sessions`` initialized sessions of the 2025-11-25 revision spread
evenly over ``--endpoints`` endpoint keys (one subscriber of ``demo://x`` on each endpoint). Two
``ChangeWriter`` instances, each with its own store clients, stand for two workers: every change
is written by both side by side (``gather``), as every worker's bus listener does, exactly once
in all. Per round, back to back, one change of each shape:

- ``no endpoint``: ``{"kind": "tools", "endpoints": []}``: nobody (the floor: claims and parts);
- ``one endpoint``: ``{"kind": "tools", "endpoints": [<one key>]}``: that endpoint's sessions;
- ``<N> endpoints``: a tenth of the endpoints (1,000 of 10,000 sessions by default);
- ``one server row``: ``{"kind": "servers", "endpoints": [<one key>]}``: its three list_changed;
- ``every session``: ``{"kind": "tools"}`` (no ``endpoints``): every session, what every change
  cost before issue 39 whatever it touched.

For each: wall time until both writers return (every part written), the writers' CPU (this
process), the Redis commands run (``commandstats`` diffed) and Redis' own CPU, the entries
written. Medians over ``--rounds``; the ratio column is each row over ``every session``. The
stream logs are trimmed as in production (``RedisEventStore`` defaults).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import secrets
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import redis
from harness import ROOT  # noqa: F401 (puts the repository root on sys.path)

from mcp_protocol.fanout import ChangeWriter, change_key
from mcp_protocol.fanout.notifications import Change
from mcp_protocol.provider import ProviderCapabilities
from mcp_protocol.session import Session
from mcp_protocol.stores.redis import RedisEventStore, RedisSessionStore
from tests.support.polling import wait_until
from tests.support.ports import free_port
from tests.support.private_redis import have_redis_server, redis_client, shutdown, start_server

DEADLINE = 120.0
CAPS = ProviderCapabilities()


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--endpoints", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--redis", help="a Redis URL instead of a private redis-server")
    parser.add_argument("--json-out", type=Path)
    return parser.parse_args()


def redis_counters(client: redis.Redis) -> tuple[int, dict[str, int], float]:
    """(commands run, calls per command, Redis CPU seconds) so far."""
    stats: dict[str, Any] = client.info("commandstats")
    calls = {name.removeprefix("cmdstat_"): int(v["calls"]) for name, v in stats.items()}
    cpu: dict[str, Any] = client.info("cpu")
    return sum(calls.values()), calls, float(cpu["used_cpu_user"]) + float(cpu["used_cpu_sys"])


async def populate(store: RedisSessionStore, total: int, keys: list[str]) -> dict[str, list[str]]:
    made: dict[str, list[str]] = {key: [] for key in keys}
    sessions = []
    for i in range(total):
        key = keys[i % len(keys)]
        session = Session.create(f"key:{i % 50}", endpoint=key)
        session.state, session.protocol_version = "ready", "2025-11-25"
        if len(made[key]) == 0:
            session.subscriptions = {"demo://x"}
        made[key].append(session.id)
        sessions.append(session)
    for start in range(0, total, 32):  # 32 creates in flight (the client's connection pool)
        await asyncio.gather(*(store.create(s) for s in sessions[start:start + 32]))
    return made


async def one_change(writers: list[ChangeWriter], message: dict[str, Any],
                     client: redis.Redis, by_command: dict[str, int] | None = None) -> dict[str, float]:
    commands_before, calls_before, redis_cpu_before = redis_counters(client)
    cpu_before, started = time.process_time(), time.perf_counter()
    change = Change.of(message)
    written = await asyncio.wait_for(asyncio.gather(
        *(w.write(change_key(message), change, CAPS) for w in writers)), DEADLINE)
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu_before
    commands_after, calls_after, redis_cpu_after = redis_counters(client)
    if by_command is not None:  # this change's commands by name (less the probe's INFO)
        by_command.clear()
        by_command.update({name: calls - calls_before.get(name, 0) - (2 if name == "info" else 0)
                           for name, calls in calls_after.items()})
        by_command.update({name: n for name, n in by_command.items() if n})
    return {"ms": wall * 1000, "cpu_ms": cpu * 1000, "entries": float(sum(written)),
            "commands": float(commands_after - commands_before - 2),  # less the two INFO of the probe
            "redis_cpu_ms": (redis_cpu_after - redis_cpu_before) * 1000}


async def measure(url: str, args: argparse.Namespace) -> dict[str, Any]:
    prefix = f"mcpbench-ep-{secrets.token_hex(4)}"
    keys = [f"ep-{i:03d}" for i in range(args.endpoints)]
    sessions = [RedisSessionStore(url=url, prefix=prefix) for _ in range(2)]
    events = [RedisEventStore(url=url, prefix=prefix) for _ in range(2)]
    writers = [ChangeWriter(s, e) for s, e in zip(sessions, events, strict=True)]
    client = redis.Redis.from_url(url)
    try:
        started = time.perf_counter()
        made = await populate(sessions[0], args.sessions, keys)
        took = time.perf_counter() - started
        print(f"{args.sessions:,} sessions over {len(keys)} endpoints in {took:.1f} s", flush=True)
        wide = max(1, len(keys) // 10)
        shapes = {
            "no endpoint": lambda n: {"kind": "tools", "uris": [], "endpoints": []},
            "one endpoint": lambda n: {"kind": "tools", "uris": [], "endpoints": [keys[n % len(keys)]]},
            f"{wide} endpoints": lambda n: {"kind": "tools", "uris": [],
                                            "endpoints": [keys[(n + i) % len(keys)] for i in range(wide)]},
            "one server row": lambda n: {"kind": "servers", "uris": [], "endpoints": [keys[n % len(keys)]]},
            "every session": lambda n: {"kind": "tools", "uris": []},
        }
        await one_change(writers, {"id": "warmup", **shapes["every session"](0)}, client)
        rows: dict[str, list[dict[str, float]]] = {name: [] for name in shapes}
        commands: dict[str, dict[str, int]] = {name: {} for name in shapes}  # the last round's
        for n in range(args.rounds):
            for name, shape in shapes.items():
                rows[name].append(await one_change(writers, {"id": f"{name}-{n}", **shape(n)}, client,
                                                   commands[name]))
        listing = {}
        for name, list_once in (("endpoint_session_ids", lambda: sessions[0].endpoint_session_ids(keys[0])),
                                ("session_ids", sessions[0].session_ids)):
            times = []
            await list_once()  # unmeasured: the first call of a kind warms its path up
            for _ in range(args.rounds):
                t0 = time.perf_counter()
                await list_once()
                times.append((time.perf_counter() - t0) * 1000)
            listing[name] = statistics.median(times)
        # What the per-endpoint index costs Redis: its zsets and the sid -> endpoint hash.
        index_keys = [*client.scan_iter(match=f"{{{prefix}}}:endpoint:*", count=1000),
                      f"{{{prefix}}}:endpoint_of"]
        index_bytes = sum(int(client.memory_usage(key, samples=0) or 0) for key in index_keys)
        return {"sessions": args.sessions, "index_bytes_per_session": index_bytes / args.sessions,
                "endpoints": len(keys),
                "per_endpoint": len(made[keys[0]]), "rounds": args.rounds,
                "medians": {name: {k: statistics.median(r[k] for r in runs) for k in runs[0]}
                            for name, runs in rows.items()},
                "listing_ms": listing,
                "commands_last_round": {name: {k: v for k, v in sorted(c.items()) if v}
                                        for name, c in commands.items()}}
    finally:
        for store in (*sessions, *events):
            await store.close()
        for key in client.scan_iter(match=f"*{prefix}*", count=1000):
            client.delete(key)
        client.close()


def report(result: dict[str, Any]) -> str:
    medians = result["medians"]
    base = medians["every session"]
    lines = [f"{result['sessions']:,} sessions over {result['endpoints']} endpoints "
             f"({result['per_endpoint']} each), two writers, median of {result['rounds']} rounds",
             "",
             "| change | entries | wall ms | writers' CPU ms | Redis commands | Redis CPU ms "
             "| wall / every |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for name, row in medians.items():
        lines.append(f"| {name} | {row['entries']:,.0f} | {row['ms']:.1f} | {row['cpu_ms']:.1f} | "
                     f"{row['commands']:,.0f} | {row['redis_cpu_ms']:.1f} | {row['ms'] / base['ms']:.3f} |")
    listing = result["listing_ms"]
    lines += ["", f"listing one endpoint's sessions: {listing['endpoint_session_ids']:.2f} ms; "
                  f"every session: {listing['session_ids']:.2f} ms; the per-endpoint index in Redis: "
                  f"{result['index_bytes_per_session']:.0f} bytes per session", "",
              "Redis commands of the last round, by name:", ""]
    for name, counts in result["commands_last_round"].items():
        lines.append(f"- {name}: " + ", ".join(f"{k} {v:,}" for k, v in counts.items()))
    return "\n".join(lines)


def answers(port: int) -> bool:
    try:
        return bool(redis_client(port).ping())
    except redis.RedisError:
        return False


def main() -> int:
    args = parse_args()
    if args.redis:
        result = asyncio.run(measure(args.redis, args))
    else:
        if not have_redis_server():
            print("needs redis-server (or --redis URL)", file=sys.stderr)
            return 2
        port = free_port()
        with tempfile.TemporaryDirectory(prefix="mcpbench-ep-") as tmp:
            start_server(port, Path(tmp))
            try:
                wait_until("the private redis-server", lambda: answers(port), seconds=10)
                result = asyncio.run(measure(f"redis://127.0.0.1:{port}/0", args))
            finally:
                shutdown(port)
    print(report(result))
    if args.json_out:
        args.json_out.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
