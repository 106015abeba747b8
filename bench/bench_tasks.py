"""Tasks (issue 26): what a task adds over the same call made synchronously, and what 10,000 tasks
in ``working`` cost two workers.

    .venv/bin/python bench/bench_tasks.py [--calls 60] [--concurrency 4] [--tasks 10000]

Part one, one uvicorn worker (the conformance registry in SQLite, the Redis task store on the
shared Redis under a fresh key prefix): ``slow_compute`` (``seconds`` of sleep) called ``--calls``
times synchronously (a 2026-07-28 request without the tasks extension) and as many times as a task
(with it: ``CreateTaskResult``, then ``tasks/get`` every ``--poll-ms`` until ``completed``),
interleaved round by round; each latency is from sending ``tools/call`` to holding the result.
The task figure includes up to one poll interval of waiting by construction, so the script also
prints the server-side create → completed time the task itself records (``lastUpdatedAt -
createdAt``) against the tool's own sleep.

Part two, two uvicorn workers on the same Redis: ``--tasks`` tasks of ``slow_compute`` with a
long sleep, half created on each worker, so all are ``working`` (each a running asyncio task,
renewing its lease); each worker's RSS before and after (memory per task on the worker) and
Redis ``used_memory`` (per task in the store); then ``tasks/get`` per second over both workers
(closed loop, random tasks), and the cleanup cancels every task. Not a test; see bench/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import time
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from harness.httpclient import RawConnection

from tests.support.live_server import REGISTRY_PROVIDER, LiveServer

MODERN = "2026-07-28"
EXTENSION = {"extensions": {"io.modelcontextprotocol/tasks": {}}}


def message(id: int, method: str, params: dict[str, Any], caps: dict[str, Any]) -> dict[str, Any]:
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": caps,
    }
    return {"jsonrpc": "2.0", "id": id, "method": method, "params": {**params, "_meta": meta}}


def headers(method: str, name: str) -> dict[str, str]:
    return {"MCP-Protocol-Version": MODERN, "Mcp-Method": method, "Mcp-Name": name}


class Pool:
    """Keep-alive connections to one worker, one per concurrent caller (bench/harness's raw
    client: a fraction of httpx's CPU, so the client is not what is measured)."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self.host, self.port, self.path = parts.hostname or "127.0.0.1", parts.port or 80, parts.path
        self.idle: list[RawConnection] = []

    async def rpc(
        self, method: str, params: dict[str, Any], caps: dict[str, Any] = EXTENSION
    ) -> dict[str, Any]:
        conn = self.idle.pop() if self.idle else RawConnection(self.host, self.port, self.path)
        try:
            return await rpc(conn, method, params, caps)
        except (asyncio.IncompleteReadError, ConnectionError):
            # The server closed it while it sat idle (uvicorn's keep-alive timeout): once more, anew.
            conn = RawConnection(self.host, self.port, self.path)
            return await rpc(conn, method, params, caps)
        finally:
            self.idle.append(conn)


async def rpc(
    conn: RawConnection, method: str, params: dict[str, Any], caps: dict[str, Any] = EXTENSION
) -> dict[str, Any]:
    name = str(params.get("name") or params.get("taskId") or "")
    body_bytes = json.dumps(message(1, method, params, caps)).encode()
    response = await conn.send("POST", body_bytes, headers(method, name))
    text = response.body.decode()
    if not text.startswith("{"):  # an event stream: the response is the data line with the id
        text = [line[5:] for line in text.splitlines() if line.startswith("data:") and '"id"' in line][-1]
    body: dict[str, Any] = json.loads(text)
    if "result" not in body:
        raise RuntimeError(f"{method}: {body}")
    result: dict[str, Any] = body["result"]
    return result


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def worker_pid(server: LiveServer) -> int:
    """The uvicorn worker process (the server's own pid with --workers 1)."""
    assert server.process is not None
    return server.process.pid


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def latency(url: str, calls: int, concurrency: int, seconds: float, poll_ms: int) -> None:
    sync_ms: list[float] = []
    task_ms: list[float] = []
    server_ms: list[float] = []
    pool = Pool(url)
    call = {"name": "slow_compute", "arguments": {"seconds": seconds}}

    async def one_sync() -> None:
        began = time.perf_counter()
        result = await pool.rpc("tools/call", call, caps={})
        assert result["content"], result
        sync_ms.append((time.perf_counter() - began) * 1000)

    async def one_task() -> None:
        began = time.perf_counter()
        created = await pool.rpc("tools/call", call)
        assert created["resultType"] == "task", created
        while True:
            await asyncio.sleep(poll_ms / 1000)
            task = await pool.rpc("tasks/get", {"taskId": created["taskId"]})
            if task["status"] == "completed":
                break
        task_ms.append((time.perf_counter() - began) * 1000)
        server_ms.append(_iso_ms(task["lastUpdatedAt"]) - _iso_ms(task["createdAt"]))

    for _ in range(max(1, calls // concurrency)):
        await asyncio.gather(*(one_sync() for _ in range(concurrency)))
        await asyncio.gather(*(one_task() for _ in range(concurrency)))
    print(
        f"tool sleep {seconds * 1000:.0f} ms, {len(sync_ms)} calls each way, concurrency {concurrency}, "
        f"tasks/get every {poll_ms} ms"
    )
    for label, values in (
        ("sync call", sync_ms),
        ("task, client-side", task_ms),
        ("task, server create->completed", server_ms),
    ):
        print(f"  {label:32s} p50 {percentile(values, 0.5):8.1f} ms   p99 {percentile(values, 0.99):8.1f} ms")
    added = [t - s for t, s in zip(sorted(task_ms), sorted(sync_ms), strict=False)]
    print(
        f"  {'task - sync (client-side)':32s} p50 {percentile(added, 0.5):8.1f} ms   "
        f"p99 {percentile(task_ms, 0.99) - percentile(sync_ms, 0.99):8.1f} ms"
    )


def _iso_ms(text: str) -> float:
    from datetime import datetime

    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000


def redis_used_memory(url: str) -> int:
    import redis

    client = redis.Redis.from_url(url)
    try:
        return int(client.info("memory")["used_memory"])
    finally:
        client.close()


async def many(urls: list[str], pids: list[int], count: int, redis_url: str, seconds: float) -> None:
    pools = [Pool(url) for url in urls]
    for pool in pools:  # warm: the registry loaded, the runner started
        await pool.rpc("tools/call", {"name": "greet", "arguments": {}}, caps={})
    await asyncio.sleep(1)
    before = [rss_kb(pid) for pid in pids]
    redis_before = redis_used_memory(redis_url)
    ids: list[str] = []
    sem = asyncio.Semaphore(64)
    began = time.perf_counter()

    async def create(n: int) -> None:
        async with sem:
            call = {"name": "slow_compute", "arguments": {"seconds": 3600, "label": f"t{n}"}}
            ids.append((await pools[n % len(pools)].rpc("tools/call", call))["taskId"])

    await asyncio.gather(*(create(n) for n in range(count)))
    made = time.perf_counter() - began
    await asyncio.sleep(2)
    after = [rss_kb(pid) for pid in pids]
    redis_after = redis_used_memory(redis_url)
    print(f"{count} tasks working on {len(urls)} workers, created in {made:.1f} s ({count / made:.0f}/s)")
    for n, (b, a) in enumerate(zip(before, after, strict=True)):
        per = (a - b) * 1024 / (count / len(urls))
        print(f"  worker {n}: RSS {b / 1024:.0f} -> {a / 1024:.0f} MiB, {per / 1024:.1f} KiB per task")
    print(f"  Redis: {(redis_after - redis_before) / count:.0f} bytes per task")
    done = 0
    deadline = time.perf_counter() + seconds

    async def getter(n: int) -> None:
        nonlocal done
        while time.perf_counter() < deadline:
            task = await pools[n % len(pools)].rpc("tasks/get", {"taskId": random.choice(ids)})
            assert task["status"] == "working", task
            done += 1

    await asyncio.gather(*(getter(n) for n in range(32)))
    print(f"  tasks/get: {done / seconds:.0f} per second over both workers (32 connections)")
    cancel_sem = asyncio.Semaphore(64)

    async def cancel(n: int, task_id: str) -> None:
        async with cancel_sem:
            await pools[n % len(pools)].rpc("tasks/cancel", {"taskId": task_id})

    await asyncio.gather(*(cancel(n, t) for n, t in enumerate(ids)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=60)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=0.2, help="the tool's sleep in part one")
    parser.add_argument("--poll-ms", type=int, default=20)
    parser.add_argument("--tasks", type=int, default=10_000)
    parser.add_argument("--get-seconds", type=float, default=5.0)
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/0")
    args = parser.parse_args()
    env = {
        "REDIS_URL": args.redis_url,
        "MCP_KEY_PREFIX": f"mcpbench-{uuid.uuid4().hex[:8]}",
        "MCP_METRICS": "0",
        "MCP_AUDIT_SINK": "database",
    }
    one = LiveServer(env=env, provider=REGISTRY_PROVIDER, load="load_conformance").start()
    try:
        asyncio.run(latency(one.url, args.calls, args.concurrency, args.seconds, args.poll_ms))
    finally:
        one.stop()
    if args.tasks:
        workers = [
            LiveServer(env=env, provider=REGISTRY_PROVIDER, load="load_conformance").start() for _ in range(2)
        ]
        try:
            asyncio.run(
                many(
                    [w.url for w in workers],
                    [worker_pid(w) for w in workers],
                    args.tasks,
                    args.redis_url,
                    args.get_seconds,
                )
            )
        finally:
            for worker in workers:
                worker.stop()
    print(f"removed {remove_keys(args.redis_url, env['MCP_KEY_PREFIX'])} Redis keys of this run")


def remove_keys(url: str, prefix: str) -> int:
    """The run's keys, whatever was left (the shared Redis is others' too)."""
    import redis

    client = redis.Redis.from_url(url)
    try:
        keys = [*client.scan_iter(match=f"*{prefix}*", count=1000)]
        for start in range(0, len(keys), 500):
            client.delete(*keys[start : start + 500])
        return len(keys)
    finally:
        client.close()


if __name__ == "__main__":
    main()
