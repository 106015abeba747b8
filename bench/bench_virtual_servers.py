"""Virtual servers (issue 39): ``tools/list`` on one of 200 servers over 2,000 tools against the
catch-all ``/mcp`` of the same deployment, in-process through ``mcpsite.asgi:application``, in
one run; and the memory each server's view costs (tracemalloc).

    .venv/bin/python bench/bench_virtual_servers.py [--calls 2000] [--rounds 7]

The deployment: 2,000 tools, tool ``i`` tagged ``g<i % 200>``; server ``s<k>`` includes the tags
``g<k>`` … ``g<k+9>`` (100 tools, one page). ``/mcp`` lists its first page (``PAGE_SIZE`` 100),
so both answers carry 100 tools: the figure compares what serving a virtual server adds (routing
by slug, its runtime view, its selection) and not the size of the answer. Each round times
``--calls`` lists on each path back to back in this process's CPU time; the best round of each is
kept (as ``bench_routing.py``). Memory: every one of the 200 servers is built and listed once
(its ``Server``, runtime view, selected snapshot and wire cache entry), measured with tracemalloc
and divided by 200.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mcpsite.settings")
os.environ["MCP_PROVIDER"] = "__main__.BenchProvider"
os.environ.setdefault("MCP_LOG_LEVEL", "WARNING")
os.environ.setdefault("MCP_AUDIT", "0")

from harness.inprocess import HEADERS, INITIALIZE  # noqa: E402

from mcp_protocol.definitions import Tool  # noqa: E402
from mcp_protocol.endpoints import EndpointSpec, Selection  # noqa: E402
from mcp_protocol.memory_provider import MemoryProvider  # noqa: E402

TOOLS, SERVERS, GROUPS_PER_SERVER = 2000, 200, 10
LIST = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}).encode()


async def _echo(args: dict[str, Any], ctx: Any) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": "ok"}]}


def specs() -> list[EndpointSpec]:
    return [
        EndpointSpec(
            slug=f"s{k}",
            name=f"server {k}",
            instructions=f"Server {k}'s tools.",
            selection=Selection.of(include_tags={f"g{(k + j) % SERVERS}" for j in range(GROUPS_PER_SERVER)}),
        )
        for k in range(SERVERS)
    ]


class BenchProvider(MemoryProvider):
    def __init__(self, **options: Any) -> None:
        schema = {"type": "object", "properties": {"q": {"type": "string"}}}
        tools = [
            (Tool(f"tool_{i:04d}", schema, f"Tool {i} of the bench", tags=(f"g{i % SERVERS}",)), _echo)
            for i in range(TOOLS)
        ]
        super().__init__(tools=tools, resources=[], templates=[], prompts=[], endpoints=specs())


async def post(app: Any, path: str, body: bytes, session: bytes | None) -> list[dict[str, Any]]:
    headers = HEADERS + ([(b"mcp-session-id", session)] if session else [])
    scope = {
        "type": "http", "method": "POST", "path": path, "root_path": "", "query_string": b"",
        "headers": headers, "server": ("127.0.0.1", 8000), "client": ("127.0.0.1", 1), "scheme": "http",
    }
    sent: list[dict[str, Any]] = []
    pending = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive() -> dict[str, Any]:
        return pending.pop() if pending else {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(scope, receive, send)
    return sent


async def open_session(app: Any, path: str) -> bytes:
    started = await post(app, path, json.dumps(INITIALIZE).encode(), None)
    session: bytes = dict(started[0]["headers"])[b"mcp-session-id"]
    await post(app, path, b'{"jsonrpc":"2.0","method":"notifications/initialized"}', session)
    return session


def listed(answer: list[dict[str, Any]]) -> int:
    return len(json.loads(answer[-1]["body"])["result"]["tools"])


async def main(calls: int, rounds: int) -> None:
    import django

    django.setup()
    from mcpsite.asgi import application, service

    paths = {path: await open_session(application, path) for path in ("/mcp", "/mcp/s7")}
    for path, session in paths.items():
        assert listed(await post(application, path, LIST, session)) == 100, path
    best = dict.fromkeys(paths, float("inf"))
    for _ in range(rounds):
        for path, session in paths.items():
            start = time.process_time()
            for _ in range(calls):
                await post(application, path, LIST, session)
            best[path] = min(best[path], (time.process_time() - start) / calls * 1e6)
    ratio = best["/mcp"] / best["/mcp/s7"]
    print(f"tools/list (100 tools) in-process, CPU time, best of {rounds} rounds x {calls} calls:")
    print(f"  /mcp (catch-all, first page of {TOOLS})  {best['/mcp']:7.1f} us/list")
    print(f"  /mcp/s7 (1 of {SERVERS} servers)         {best['/mcp/s7']:7.1f} us/list")
    print(f"  virtual/catch-all rate {ratio:.3f} ({'at least' if ratio >= 0.9 else 'BELOW'} 0.9x)")

    rt = service.current()
    assert rt is not None
    from mcp_protocol.transports.runtime import EndpointRuntimes

    # 1. What a server's own objects cost: its Server (paginator, sealer, wire cache) and runtime
    # view, built in a cache of their own so that none exists yet.
    fresh = EndpointRuntimes(rt)
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    for spec in specs():
        fresh.get(spec)
    objects = grown_since(before)
    # 2. What serving it adds: its selected snapshot and the wire cache's page, at the first list.
    # The sessions are opened first (their records are the store's, not the views').
    sessions = {spec.slug: await open_session(application, spec.route) for spec in specs()}
    before = tracemalloc.take_snapshot()
    for spec in specs():
        await post(application, spec.route, LIST, sessions[spec.slug])
    served = grown_since(before)
    tracemalloc.stop()
    print(f"memory per server view, {SERVERS} servers of 100 tools each (tracemalloc):")
    print(f"  Server + runtime view              {objects / SERVERS / 1024:6.1f} KiB")
    print(f"  selected snapshot + listed page    {served / SERVERS / 1024:6.1f} KiB")
    print(f"  total                              {(objects + served) / SERVERS / 1024:6.1f} KiB "
          f"({(objects + served) / 1024 / 1024:.1f} MiB for {SERVERS})")


def grown_since(before: tracemalloc.Snapshot) -> int:
    after = tracemalloc.take_snapshot()
    return sum(stat.size_diff for stat in after.compare_to(before, "filename"))

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    asyncio.run(main(args.calls, args.rounds))
