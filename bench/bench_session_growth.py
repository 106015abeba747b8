"""Session creates per second as live sessions accumulate, memory and Redis in one run (not a test).

    .venv/bin/python bench/bench_session_growth.py [--redis-url redis://127.0.0.1:6379/0] [--count 10000]

Creates ``--count`` sessions of one principal (the worst case for the per-principal cap) with both
caps on and above the count, ``--concurrency`` coroutines at a time (default 32: one busy worker),
and prints the rate of each thousand: the first (0 live), the one starting at 5,000 live, the last,
and last/first (the issue's target: at least 0.9), each the median of ``--rounds`` runs (default
3). Redis keys go under a random prefix deleted afterwards.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mcpsite.settings")

import redis

from mcp_protocol.session import Session
from mcp_protocol.stores.memory import MemorySessionStore
from mcp_protocol.stores.redis import RedisSessionStore
from mcp_protocol.stores.sessions import SessionStore

BLOCK = 1000


async def creates_per_block(store: SessionStore, count: int, concurrency: int) -> list[float]:
    """creates/s of each block of ``BLOCK`` consecutive creates."""
    warmup = [Session.create("bench") for _ in range(200)]  # connections, scripts: then 0 live again
    for session in warmup:
        await store.create(session)
    for session in warmup:
        await store.delete(session.id)
    rates: list[float] = []
    for _ in range(count // BLOCK):
        queue = iter(range(BLOCK))

        async def runner(queue: Iterator[int] = queue) -> None:
            for _ in queue:
                await store.create(Session.create("bench"))

        started = time.perf_counter()
        await asyncio.gather(*(runner() for _ in range(concurrency)))
        rates.append(BLOCK / (time.perf_counter() - started))
    return rates


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--redis-url", default=os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"))
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=3, help="each block's median over the rounds")
    args = parser.parse_args()
    caps = {"max_sessions": args.count * 2, "max_sessions_per_principal": args.count * 2}
    runs: dict[str, list[list[float]]] = {"memory": [], "redis": []}
    for _ in range(args.rounds):
        # Backends alternate within each round, so load from elsewhere hits both alike.
        prefix = f"mcpbench-{secrets.token_hex(4)}"
        try:
            for backend in runs:
                store: SessionStore = (MemorySessionStore(**caps) if backend == "memory"
                                       else RedisSessionStore(url=args.redis_url, prefix=prefix, **caps))
                runs[backend].append(await creates_per_block(store, args.count, args.concurrency))
                await store.close()
        finally:
            client = redis.Redis.from_url(args.redis_url)
            keys = list(client.scan_iter(match=f"*{prefix}*", count=1000))
            for i in range(0, len(keys), 1000):
                client.delete(*keys[i:i + 1000])
            client.close()
    results = {backend: [statistics.median(block) for block in zip(*rounds, strict=True)]
               for backend, rounds in runs.items()}
    middle = min(5000 // BLOCK, args.count // BLOCK - 1)
    print(f"{'backend':8} {'first 1,000':>12} {f'from {middle * BLOCK:,}':>12} {'last 1,000':>12} "
          f"{'last/first':>10}   (creates/s, {args.concurrency} concurrent, one principal, "
          f"median of {args.rounds})")
    for backend, rates in results.items():
        print(f"{backend:8} {rates[0]:>12,.0f} {rates[middle]:>12,.0f} {rates[-1]:>12,.0f} "
              f"{rates[-1] / rates[0]:>10.2f}")


if __name__ == "__main__":
    started = time.monotonic()
    asyncio.run(main())
    print(f"(ran {time.monotonic() - started:.1f} s)")
