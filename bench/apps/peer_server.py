"""The peer the benchmark compares us with: the official ``mcp`` SDK's ``MCPServer`` over Streamable HTTP.

It hosts the same workload as ours after ``load_demo`` + ``seed_tools``: an ``echo`` tool
(``{message}`` → one text block with the message) and filler tools up to ``--tools`` in total, so
``tools/list`` returns the same number of tools. Served by uvicorn (one worker, loopback only) in
the SDK's JSON-response mode (``--json``) or its default SSE mode (``--sse``), with sessions, the
SDK's defaults otherwise (DNS-rebinding protection on for 127.0.0.1).

    .venv/bin/python bench/apps/peer_server.py --port 8765 --json

``MCPServer`` (formerly FastMCP) is the server API the SDK documents first and the one most
Python MCP servers use, so it is the fair peer; ``--lowlevel`` swaps in the bare ``Server`` with
hand-written handlers for a stricter comparison.
"""

from __future__ import annotations

import argparse
from typing import Any

import uvicorn
from mcp.server import Server, ServerRequestContext
from mcp.server.mcpserver import MCPServer
from mcp.types import (
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    Tool,
)

ECHO_DESCRIPTION = "Echo the message back as text."


def filler_names(total: int) -> list[str]:
    """Names of the tools besides ``echo``: ``bench_tool_001`` ... up to ``total`` tools in all."""
    return [f"bench_tool_{index:03d}" for index in range(1, total)]


def build_mcpserver(total_tools: int) -> Any:
    server: MCPServer[Any] = MCPServer(name="sdk-peer", log_level="WARNING")

    def echo(message: str) -> str:
        return message

    server.add_tool(echo, name="echo", description=ECHO_DESCRIPTION, structured_output=False)
    for name in filler_names(total_tools):
        server.add_tool(
            make_filler(name),
            name=name,
            description=f"Benchmark filler tool {name}.",
            structured_output=False,
        )
    return server


def make_filler(name: str) -> Any:
    def filler(value: str = "") -> str:
        return f"{name}: {value}"

    return filler


def build_lowlevel(total_tools: int) -> Any:
    schema = {"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]}
    filler_schema = {"type": "object", "properties": {"value": {"type": "string"}}}
    tools = [Tool(name="echo", description=ECHO_DESCRIPTION, input_schema=schema)]
    tools += [
        Tool(name=name, description=f"Benchmark filler tool {name}.", input_schema=filler_schema)
        for name in filler_names(total_tools)
    ]

    async def list_tools(
        ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        return ListToolsResult(tools=tools)

    async def call_tool(ctx: ServerRequestContext[Any], params: CallToolRequestParams) -> CallToolResult:
        arguments = params.arguments or {}
        text = str(arguments.get("message", arguments.get("value", "")))
        return CallToolResult(content=[TextContent(type="text", text=text)])

    return Server("sdk-peer-lowlevel", on_list_tools=list_tools, on_call_tool=call_tool)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--tools", type=int, default=100, help="tools in tools/list, echo included")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--json", dest="json_response", action="store_true", help="JSON responses")
    mode.add_argument("--sse", dest="json_response", action="store_false", help="SSE responses (default)")
    parser.add_argument("--lowlevel", action="store_true", help="bare lowlevel Server instead of MCPServer")
    args = parser.parse_args()
    server = build_lowlevel(args.tools) if args.lowlevel else build_mcpserver(args.tools)
    app = server.streamable_http_app(json_response=args.json_response, host="127.0.0.1")
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning", access_log=False)


if __name__ == "__main__":
    main()
