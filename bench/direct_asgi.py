"""The dispatch ``mcpsite/asgi.py`` had before it routed through Channels, kept for one purpose:
``bench.py --routing`` measures tools/call through Channels' ``ProtocolTypeRouter`` +
``URLRouter`` (``mcpsite.asgi:application``) against this, in the same run. Not served anywhere.
"""

from __future__ import annotations

from typing import Any

from mcp_protocol.routing import lifespan
from mcp_protocol.transports.http import MCPEndpoint
from mcpsite.asgi import django_application

mcp_application = MCPEndpoint()
MCP_PATHS = frozenset({"/mcp", "/mcp/"})


async def application(scope: Any, receive: Any, send: Any) -> None:
    kind = scope["type"]
    if kind == "http" and scope["path"] in MCP_PATHS:
        await mcp_application(scope, receive, send)
    elif kind == "lifespan":
        await lifespan(scope, receive, send)
    else:
        await django_application(scope, receive, send)
