"""What a queue library adds before a task's tool starts: enqueue → job start latency of arq and
pydocket (the one FastMCP uses) on the local Redis, for the issue-26 decision to run tasks in the
web worker that got the call (``mcp_protocol/tasks/runner.py``: the tool starts in-process, no hop).

    python -m venv /tmp/qvenv && /tmp/qvenv/bin/pip install arq==0.28.0 pydocket==0.26.0
    /tmp/qvenv/bin/python bench/bench_task_queues.py

Not in the project's environment on purpose (they are measured, not used), so not pinned in
pyproject.toml. Each library with its defaults, its worker in the same process as the producer
(a separate process only adds to the figure), 100 jobs 20 ms apart; queue names are fresh and
their keys are removed afterwards. Not a test; see bench/README.md.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

N = 100
starts: dict[int, float] = {}


async def arq_job(ctx: Any, n: int, t0: float) -> None:
    starts[n] = time.time() - t0


async def bench_arq() -> list[float]:
    from arq import create_pool
    from arq.connections import RedisSettings
    from arq.worker import Worker

    q = f"qbench-arq-{uuid.uuid4().hex[:6]}"
    pool = await create_pool(RedisSettings(), default_queue_name=q)
    worker = Worker(functions=[arq_job], redis_settings=RedisSettings(), queue_name=q, max_jobs=100)
    run = asyncio.create_task(worker.async_run())
    await asyncio.sleep(1)
    starts.clear()
    for n in range(N):
        await pool.enqueue_job("arq_job", n, time.time())
        await asyncio.sleep(0.02)
    await asyncio.sleep(2)
    run.cancel()
    await worker.close()
    await pool.aclose()
    return sorted(starts.values())


async def docket_job(n: int, t0: float) -> None:
    starts[n] = time.time() - t0


async def bench_docket() -> list[float]:
    from docket import Docket, Worker

    async with Docket(name=f"qbench-docket-{uuid.uuid4().hex[:6]}", url="redis://127.0.0.1:6379/0") as docket:
        docket.register(docket_job)
        async with Worker(docket) as worker:
            run = asyncio.create_task(worker.run_forever())
            await asyncio.sleep(1)
            starts.clear()
            for n in range(N):
                await docket.add(docket_job)(n, time.time())
                await asyncio.sleep(0.02)
            await asyncio.sleep(2)
            run.cancel()
    return sorted(starts.values())


def show(name: str, v: list[float]) -> None:
    p50, p99 = v[len(v) // 2] * 1000, v[int(len(v) * 0.99) - 1] * 1000
    print(f"{name}: {len(v)} jobs, enqueue->start p50 {p50:.1f} ms, p99 {p99:.1f} ms", flush=True)


def remove_keys() -> None:
    import redis

    client = redis.Redis()
    for pattern in ("*qbench-*", "arq:result:*"):
        keys = list(client.scan_iter(match=pattern, count=1000))
        if keys:
            client.delete(*keys)
    client.close()


async def main() -> None:
    try:
        show("arq 0.28.0 (defaults)", await bench_arq())
        show("pydocket 0.26.0 (defaults)", await bench_docket())
    finally:
        remove_keys()


if __name__ == "__main__":
    asyncio.run(main())
