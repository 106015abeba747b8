"""2026-07-28 beside the legacy era, in one run against one server process: tools/call req/s of
the stateless path and of a 2025-11-25 session, and the round-trip latency of an input-required
(MRTR) call.

    .venv/bin/python bench/bench_modern.py [--duration 3] [--concurrency 16] [--rounds 3]

One uvicorn worker (memory stores, the in-memory demo provider, JSON responses) on loopback. The
two eras' ``tools/call echo`` loops are interleaved round by round (legacy, modern, legacy, ...)
so load from other processes hits both alike; each row keeps its median round. The MRTR row times
``ask_user`` end to end as a client sees it: the call, its ``input_required`` result, the retry
with ``inputResponses`` + ``requestState``, the complete result (concurrently, closed loop). The
server's CPU time per request (from /proc) is printed too: on a shared, busy machine it is the
steadier figure. Not a test: nothing here is collected by pytest. See bench/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import time
from pathlib import Path

from harness.httpclient import RawConnection
from harness.loadgen import INITIALIZE, INITIALIZED, session_headers

from tests.support.live_server import MEMORY_PROVIDER, LiveServer

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
}
MODERN_HEADERS = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call"}
LEGACY_CALL = (
    b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hello"}}}'
)
MODERN_CALL = (
    b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hello"},'
    b'"_meta":' + json.dumps(META, separators=(",", ":")).encode() + b"}}"
)


def ask_user(id: int, **extra: object) -> bytes:
    params = {"name": "ask_user", "arguments": {"message": "Who?"}, "_meta": META, **extra}
    return json.dumps({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}).encode()


def server_cpu(pid: int) -> float:
    """CPU seconds (user + system) the server process has used so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def closed_loop(port: int, concurrency: int, duration: float, era: str) -> tuple[float, float]:
    """(requests/s, p50 ms) of tools/call echo in one era."""
    conns = [RawConnection("127.0.0.1", port, "/mcp") for _ in range(concurrency)]
    latencies: list[float] = []
    try:
        if era == "legacy":
            headers = []
            for conn in conns:
                init = await conn.send("POST", INITIALIZE, {})
                assert init.session_id, init.body
                await conn.send("POST", INITIALIZED, session_headers(init.session_id))
                headers.append(session_headers(init.session_id))
            template = LEGACY_CALL
        else:
            headers = [{**MODERN_HEADERS, "Mcp-Name": "echo"} for _ in conns]
            template = MODERN_CALL
        deadline = time.perf_counter() + duration

        async def worker(conn: RawConnection, h: dict[str, str]) -> None:
            n = 1
            while (began := time.perf_counter()) < deadline:
                n += 1
                response = await conn.send("POST", template % n, h)
                if response.status != 200 or b"hello" not in response.body:
                    raise RuntimeError(f"{era}: HTTP {response.status} {response.body[:200]!r}")
                latencies.append(time.perf_counter() - began)

        started = time.perf_counter()
        await asyncio.gather(*(worker(c, h) for c, h in zip(conns, headers, strict=True)))
        elapsed = time.perf_counter() - started
    finally:
        for conn in conns:
            await conn.close()
    return len(latencies) / elapsed, statistics.median(latencies) * 1000


async def mrtr_round_trips(port: int, concurrency: int, duration: float) -> tuple[float, float, float]:
    """(round trips/s, p50 ms, p99 ms) of ask_user: input_required, then the answered retry."""
    conns = [RawConnection("127.0.0.1", port, "/mcp") for _ in range(concurrency)]
    headers = {**MODERN_HEADERS, "Mcp-Name": "ask_user"}
    answer = {"elicitation-1": {"action": "accept", "content": {"username": "ada"}}}
    latencies: list[float] = []
    deadline = time.perf_counter() + duration

    async def worker(conn: RawConnection) -> None:
        n = 0
        while (began := time.perf_counter()) < deadline:
            n += 2
            first = json.loads((await conn.send("POST", ask_user(n), headers)).body)["result"]
            assert first["resultType"] == "input_required", first
            retry = ask_user(n + 1, inputResponses=answer, requestState=first["requestState"])
            done = json.loads((await conn.send("POST", retry, headers)).body)["result"]
            assert done["resultType"] == "complete" and "ada" in done["content"][0]["text"], done
            latencies.append(time.perf_counter() - began)

    started = time.perf_counter()
    try:
        await asyncio.gather(*(worker(c) for c in conns))
    finally:
        for conn in conns:
            await conn.close()
    elapsed = time.perf_counter() - started
    latencies.sort()
    return (
        len(latencies) / elapsed,
        latencies[len(latencies) // 2] * 1000,
        latencies[int(len(latencies) * 0.99)] * 1000,
    )


async def main(args: argparse.Namespace) -> None:
    env = {"MCP_LOG_LEVEL": "WARNING", "DJANGO_DEBUG": "0", "MCP_METRICS": "1",
           "SECRET_KEY": "bench-only-secret-key-not-for-production-use-0123456789"}
    with LiveServer(provider=MEMORY_PROVIDER, env=env) as server:
        for era in ("legacy", "modern"):  # warm-up
            await closed_loop(server.port, args.concurrency, 0.5, era)
        rows: dict[str, list[tuple[float, float]]] = {"legacy": [], "modern": []}
        cpu: dict[str, list[float]] = {"legacy": [], "modern": []}  # server CPU µs per request
        assert server.process is not None
        for _ in range(args.rounds):
            for era in ("legacy", "modern"):
                before = server_cpu(server.process.pid)
                rate, p50 = await closed_loop(server.port, args.concurrency, args.duration, era)
                cpu[era].append((server_cpu(server.process.pid) - before) / (rate * args.duration) * 1e6)
                rows[era].append((rate, p50))
        mrtr = [
            await mrtr_round_trips(server.port, args.concurrency, args.duration) for _ in range(args.rounds)
        ]
    shape = f"{args.rounds} x {args.duration:g} s interleaved (median round)"
    print(f"tools/call echo, uvicorn, 1 worker, memory stores, c={args.concurrency}, {shape}")
    for era, label in (("legacy", "legacy 2025-11-25 session"), ("modern", "modern 2026-07-28 stateless")):
        rate, p50 = sorted(rows[era])[len(rows[era]) // 2]
        us = statistics.median(cpu[era])
        print(f"  {label:<30} {rate:8.0f} req/s   p50 {p50:6.2f} ms   server CPU {us:5.0f} us/request")
    ratio = (
        sorted(r for r, _ in rows["modern"])[args.rounds // 2]
        / sorted(r for r, _ in rows["legacy"])[args.rounds // 2]
    )
    print(f"  modern / legacy: {ratio:.2f}  (target >= 1.00)")
    rate, p50, p99 = sorted(mrtr)[len(mrtr) // 2]
    print(
        f"MRTR ask_user round trip (input_required + answered retry): {rate:.0f}/s"
        f"  p50 {p50:.2f} ms  p99 {p99:.2f} ms"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=3.0)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=3)
    asyncio.run(main(parser.parse_args()))
