"""An upstream MCP server whose tool list changes at runtime, as a process of its own on loopback:
the official Python SDK's ``MCPServer`` over Streamable HTTP (issue 40 item 3, keeping current).

    with ChangingUpstream() as up:          # up.url: http://127.0.0.1:<port>/mcp
        await up.call("grow", name="extra")   # adds tool ``extra``, announces list_changed
        await up.call("shrink", name="extra") # removes it, announces list_changed

Tools: ``echo(text)``; ``grow(name)`` and ``shrink(name)``, which change the list and publish
``ToolsListChanged`` to the server's ``subscriptions/listen`` streams (2026-07-28: where list
changes go; the SDK's client negotiates that revision with it); ``flood(count, every)``, which
publishes it ``count`` times, ``every`` seconds apart, and changes nothing. A prompt
``greet(who)``, and no completion handler: the server does not advertise ``completions``.
"""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.server.mcpserver import Context, MCPServer

from .sdk_upstream_process import UpstreamProcess


def build_server() -> MCPServer:
    server = MCPServer("changing-upstream", version="1.0")

    @server.tool(description="Echo the text back.")
    def echo(text: str) -> str:
        return text

    @server.tool(description="Add a tool called name, and announce the change.")
    async def grow(name: str, ctx: Context) -> str:
        def added(text: str) -> str:
            return text

        server.add_tool(added, name=name, description=f"{name}, added at runtime")
        await ctx.notify_tools_changed()
        return f"added {name}"

    @server.tool(description="Remove the tool called name, and announce the change.")
    async def shrink(name: str, ctx: Context) -> str:
        server.remove_tool(name)
        await ctx.notify_tools_changed()
        return f"removed {name}"

    @server.tool(description="Announce a tools list change count times, every `every` s, changing nothing.")
    async def flood(count: int, every: float, ctx: Context) -> str:
        for _ in range(count):
            await ctx.notify_tools_changed()
            await asyncio.sleep(every)
        return f"announced {count} times"

    @server.prompt(description="Greet someone.")
    def greet(who: str) -> str:
        return f"Hello {who}"

    return server


class ChangingUpstream(UpstreamProcess):
    module = "tests.support.changing_upstream"
    label = "the changing upstream"

    async def call(self, tool: str, **arguments: Any) -> None:
        """Call one of the upstream's tools directly (not through mcpsite)."""
        async with Client(streamable_http_client(self.url)) as client:
            result = await client.session.call_tool(tool, arguments)
            assert not result.is_error, result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    options = parser.parse_args()
    import uvicorn

    uvicorn.run(build_server().streamable_http_app(), host="127.0.0.1", port=options.port,
                log_level="warning", access_log=False)


if __name__ == "__main__":
    main()
