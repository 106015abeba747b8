"""A hand-written direct dispatch of ``/mcp``, the baseline of two comparisons: ``bench_routing.py``
(in-process) measures Channels' ``ProtocolTypeRouter`` + ``URLRouter`` (``mcpsite.asgi.router``)
against it, and ``bench.py --routing`` (served) measures ``mcpsite.asgi:application`` against it;
since ``application`` sends ``/mcp`` to the endpoint first (``EndpointFirst``), that second
comparison checks that it costs what this function does. Not served anywhere.
"""

from __future__ import annotations

from typing import Any

from mcp_django import servers
from mcp_protocol.transports.http import MCPEndpoint
from mcpsite.asgi import django_application, service

mcp_application = MCPEndpoint(service)
MCP_PATHS = frozenset({"/mcp", "/mcp/"})


async def application(scope: Any, receive: Any, send: Any) -> None:
    kind = scope["type"]
    if kind == "http" and scope["path"] in MCP_PATHS:
        await mcp_application(scope, receive, send)
    elif kind == "lifespan":
        await servers.lifespan(service, scope, receive, send)
    else:
        await django_application(scope, receive, send)
