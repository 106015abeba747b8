"""Micro-benchmark of the session and event stores, memory vs Redis (not a test).

    .venv/bin/python bench/bench_stores.py [--redis-url redis://127.0.0.1:6379/0] [--seconds 1.2]

Each figure is ops/s over a fixed time slice, measured sequentially (one coroutine: latency-bound,
what one request sees) and with 32 concurrent coroutines (throughput of one worker process).
Keys go under a random prefix that is deleted afterwards. Total run time stays under 30 s.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import secrets
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mcpsite.settings")

import redis

from mcp_protocol.session import Session
from mcp_protocol.stores.events import EventStore
from mcp_protocol.stores.memory import MemoryEventStore, MemorySessionStore
from mcp_protocol.stores.redis import RedisEventStore, RedisSessionStore
from mcp_protocol.stores.sessions import SessionStore

CONCURRENCY = 32


async def rate(op: Callable[[int], Awaitable[object]], seconds: float, concurrency: int) -> float:
    """ops/s of ``op`` run back to back by ``concurrency`` coroutines for ``seconds``."""
    loop = asyncio.get_running_loop()
    end = loop.time() + seconds
    counts = [0] * concurrency

    async def runner(k: int) -> None:
        i = k
        while loop.time() < end:
            await op(i)
            counts[k] += 1
            i += concurrency

    start = loop.time()
    await asyncio.gather(*(runner(k) for k in range(concurrency)))
    return sum(counts) / (loop.time() - start)


async def bench_sessions(store: SessionStore, seconds: float) -> dict[str, tuple[float, float]]:
    sessions = [Session.create("bench") for _ in range(256)]
    for session in sessions:
        session.subscriptions = {"file:///bench"}
        await store.create(session)

    async def load(i: int) -> object:
        return await store.load(sessions[i % len(sessions)].id)

    async def save(i: int) -> None:
        session = sessions[i % len(sessions)]
        session.log_level = "info" if i % 2 else "debug"
        await store.save(session)

    results = {}
    for name, op in (("session load", load), ("session save", save)):
        results[name] = (await rate(op, seconds, 1), await rate(op, seconds, CONCURRENCY))
    return results


async def bench_events(store: EventStore, seconds: float) -> dict[str, tuple[float, float]]:
    message = {
        "jsonrpc": "2.0",
        "method": "notifications/progress",
        "params": {"progressToken": "t", "progress": 1, "total": 10, "message": "x" * 100},
    }

    async def append(i: int) -> str:
        return await store.append(f"s{i % 64}", "r1", message)

    results = {"event append": (await rate(append, seconds, 1), await rate(append, seconds, CONCURRENCY))}

    # Replay: events/s delivered by listen() from a retained log of 500 events.
    for _ in range(500):
        await store.append("replay", "r1", message)

    async def replay(_: int) -> None:
        events = store.listen("replay", "r1")
        n = 0
        async for _event in events:
            n += 1
            if n == 500:
                break
        await events.aclose()  # type: ignore[attr-defined]

    replays = await rate(replay, seconds, 1)
    results["listen replay (events)"] = (replays * 500, float("nan"))

    # Live tail: append → the listener has it, one at a time (round-trip latency as ops/s).
    events = store.listen("live", "r1")
    pending = asyncio.ensure_future(events.__anext__())
    await asyncio.sleep(0.05)

    async def live(_: int) -> None:
        nonlocal pending
        await store.append("live", "r1", message)
        await asyncio.wait_for(pending, 5)
        pending = asyncio.ensure_future(events.__anext__())

    results["append→live listener"] = (await rate(live, seconds, 1), float("nan"))
    pending.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await pending
    await events.aclose()  # type: ignore[attr-defined]
    return results


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--redis-url", default=os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"))
    parser.add_argument("--seconds", type=float, default=1.2, help="per measurement (9 per backend)")
    args = parser.parse_args()
    prefix = f"mcpbench-{secrets.token_hex(4)}"
    rows: list[tuple[str, str, float, float]] = []
    try:
        for backend in ("memory", "redis"):
            if backend == "memory":
                sessions: SessionStore = MemorySessionStore()
                events: EventStore = MemoryEventStore()
            else:
                sessions = RedisSessionStore(url=args.redis_url, prefix=prefix)
                events = RedisEventStore(url=args.redis_url, prefix=prefix)
            for name, (seq, conc) in {
                **await bench_sessions(sessions, args.seconds),
                **await bench_events(events, args.seconds),
            }.items():
                rows.append((backend, name, seq, conc))
            await sessions.close()
            await events.close()
    finally:
        client = redis.Redis.from_url(args.redis_url)
        keys = list(client.scan_iter(match=f"*{prefix}*", count=1000))
        if keys:
            client.delete(*keys)
        client.close()
    concurrent = f"ops/s ({CONCURRENCY} concurrent)"
    print(f"{'backend':8} {'operation':26} {'ops/s (1 coroutine)':>20} {concurrent:>22}")
    for backend, name, seq, conc in rows:
        conc_text = "-" if conc != conc else f"{conc:,.0f}"
        print(f"{backend:8} {name:26} {seq:>20,.0f} {conc_text:>22}")


if __name__ == "__main__":
    started = time.monotonic()
    asyncio.run(main())
    print(f"(ran {time.monotonic() - started:.1f} s)")
