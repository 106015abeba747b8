"""Many upstream MCP servers in one process, for ``bench_upstream_listing.py``: ``--servers`` official
Python SDK ``MCPServer`` instances of ``--tools`` tools each, at ``/u<i>/mcp`` (Streamable HTTP,
JSON responses for calls; ``subscriptions/listen`` streams for whoever listens). One process, not
twenty: the bench measures our server, and the machine is small.

    python bench/apps/many_upstreams.py --port 8931 --servers 20 --tools 50
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import AsyncIterator

import uvicorn
from mcp.server.mcpserver import MCPServer
from starlette.applications import Starlette
from starlette.routing import Mount


def build(index: int, tools: int) -> MCPServer:
    server = MCPServer(f"upstream-{index}", version="1.0")
    for number in range(tools):
        def tool(text: str) -> str:
            return text

        server.add_tool(tool, name=f"tool_{number:03d}",
                        description=f"Tool {number} of upstream {index}: echoes its text back.")
    return server


def application(servers: int, tools: int) -> Starlette:
    apps = [build(i, tools).streamable_http_app() for i in range(servers)]

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with contextlib.AsyncExitStack() as stack:
            for inner in apps:  # each server's session manager runs for the process's life
                await stack.enter_async_context(inner.router.lifespan_context(inner))
            yield

    return Starlette(routes=[Mount(f"/u{i}", app=inner) for i, inner in enumerate(apps)], lifespan=lifespan)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--servers", type=int, default=20)
    parser.add_argument("--tools", type=int, default=50)
    options = parser.parse_args()
    uvicorn.run(application(options.servers, options.tools), host="127.0.0.1", port=options.port,
                log_level="warning", access_log=False)


if __name__ == "__main__":
    main()
