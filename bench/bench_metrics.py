"""What recording the metrics costs a tools/call, measured in-process where machine load cannot
hide it: the ``/mcp`` ASGI endpoint itself, called in a loop with metrics on and off alternately.

    .venv/bin/python bench/bench_metrics.py               # one process (no multiprocess dir)
    .venv/bin/python bench/bench_metrics.py --multiprocess

Each block is ``--calls`` JSON-mode ``tools/call echo`` requests through ``MCPEndpoint`` (header
checks, body parsing, session load, dispatch, response, and with metrics on the one
``metrics.record`` call), memory stores and the in-memory provider. Blocks alternate on/off
``--blocks`` times; each block's cost is this process's CPU time (not wall time, which the other
programs on the machine would inflate), the cheapest block of each side is kept, and the
difference is the metrics' share of the endpoint's CPU time. The HTTP server's own
parsing and the network, which the end-to-end bench adds on top, only make that share smaller.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def setup(multiprocess: bool) -> None:
    if multiprocess:
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="mcpbench-metrics-")
    os.environ.update(
        DJANGO_SETTINGS_MODULE="mcpsite.settings",
        MCP_PROVIDER="mcp_protocol.memory_provider.MemoryProvider",
        MCP_LOG_LEVEL="WARNING",
    )
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()


class Exchange:
    """One request's ASGI conversation, reusable: a fixed body in, the status out."""

    def __init__(self, body: bytes, headers: list[tuple[bytes, bytes]]) -> None:
        self.body, self.headers = body, headers
        self.status = 0

    def scope(self) -> dict[str, Any]:
        return {
            "type": "http",
            "method": "POST",
            "path": "/mcp",
            "headers": self.headers,
            "server": ("127.0.0.1", 8000),
            "client": ("127.0.0.1", 5000),
        }

    async def receive(self) -> dict[str, Any]:
        return {"type": "http.request", "body": self.body, "more_body": False}

    async def send(self, message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            self.status = message["status"]


async def run(args: argparse.Namespace) -> None:
    from mcp_django.service import get_service
    from mcp_protocol.transports.http import MCPEndpoint

    endpoint = MCPEndpoint(get_service())
    base = [
        (b"host", b"127.0.0.1:8000"),
        (b"accept", b"application/json, text/event-stream"),
        (b"content-type", b"application/json"),
    ]
    init = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "b", "version": "1"},
            },
        }
    )
    opened = Exchange(init.encode(), base)
    captured: list[bytes] = []

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            captured.extend(v for k, v in message["headers"] if k == b"mcp-session-id")

    await endpoint(opened.scope(), opened.receive, send)
    session = [(b"mcp-session-id", captured[0]), (b"mcp-protocol-version", b"2025-11-25")]
    ready = Exchange(b'{"jsonrpc":"2.0","method":"notifications/initialized"}', base + session)
    await endpoint(ready.scope(), ready.receive, ready.send)
    call = Exchange(
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call",'
        b'"params":{"name":"echo","arguments":{"message":"hello"}}}',
        base + session,
    )
    rt = await get_service().runtime()
    configs = {
        "on": dataclasses.replace(rt.config, metrics=True),
        "off": dataclasses.replace(rt.config, metrics=False),
    }
    best = {"on": float("inf"), "off": float("inf")}
    sides = (args.only,) if args.only else ("off", "on")
    for _ in range(args.blocks):
        for side in sides:
            rt.config = configs[side]
            # CPU time of this process: what a request costs, whatever else the machine runs.
            start = time.process_time()
            for _ in range(args.calls):
                await endpoint(call.scope(), call.receive, call.send)
            best[side] = min(best[side], (time.process_time() - start) / args.calls)
            assert call.status == 200, call.status
    if args.only:
        print(f"metrics {args.only}: {best[args.only] * 1e6:6.1f} us per tools/call")
        return
    off, on = best["off"] * 1e6, best["on"] * 1e6
    mode = "multiprocess files" if args.multiprocess else "one process"
    print(
        f"tools/call through MCPEndpoint, metrics off: {off:6.1f} us, on ({mode}): {on:6.1f} us "
        f"-> metrics cost {on - off:4.1f} us = {(on / off - 1) * 100:4.1f} % of the endpoint's time"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--blocks", type=int, default=60)
    parser.add_argument("--multiprocess", action="store_true")
    parser.add_argument(
        "--only", choices=("on", "off"), help="one side only (instruction counts under valgrind)"
    )
    args = parser.parse_args(argv)
    setup(args.multiprocess)
    asyncio.run(run(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
