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
import os
import signal
import subprocess
import sys
import time
from types import TracebackType
from typing import Any

import httpx
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.server.mcpserver import Context, MCPServer

from .manage import ROOT
from .ports import free_port


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


class ChangingUpstream:
    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> ChangingUpstream:
        command = [sys.executable, "-m", "tests.support.changing_upstream", "--port", str(self.port)]
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        self.process = subprocess.Popen(command, cwd=ROOT, env=env, start_new_session=True,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the changing upstream exited with {self.process.returncode}")
            try:
                httpx.get(self.url, timeout=0.5)
                return self
            except httpx.TransportError:
                time.sleep(0.05)
        raise RuntimeError("the changing upstream did not start")

    async def call(self, tool: str, **arguments: Any) -> None:
        """Call one of the upstream's tools directly (not through mcpsite)."""
        async with Client(streamable_http_client(self.url)) as client:
            result = await client.session.call_tool(tool, arguments)
            assert not result.is_error, result

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(10)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()

    def __enter__(self) -> ChangingUpstream:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    options = parser.parse_args()
    import uvicorn

    uvicorn.run(build_server().streamable_http_app(), host="127.0.0.1", port=options.port,
                log_level="warning", access_log=False)


if __name__ == "__main__":
    main()
