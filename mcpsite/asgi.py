"""ASGI entry point (uvicorn or daphne): ``mcpsite.asgi:application``.

``/mcp`` goes straight to the MCP endpoint, a plain ASGI app. Measured before choosing: Django's
ASGI handler with this project's MIDDLEWARE costs milliseconds per request for a trivial async
view (request_started/finished signal handlers and sync middleware run through thread hops),
against about 1 µs for a bare ASGI callable, in-process on the 2-core dev box; the endpoint's
whole JSON-mode ``tools/call`` costs ~140 µs. The endpoint needs nothing from that stack (it has
its own auth seam, no templates, no ORM on the hot path), so it is not behind it. Everything else — the
landing page, the admin, the REST API — is Django's ASGI handler. The ``lifespan`` scope (sent by
uvicorn, not by daphne) closes the MCP runtime on shutdown; startup needs nothing, because the
runtime is built lazily on the first request.

Run: ``uvicorn mcpsite.asgi:application --host 127.0.0.1 --port 8000``
(or ``daphne -b 127.0.0.1 -p 8000 mcpsite.asgi:application``).
"""

from __future__ import annotations

import os
from typing import Any

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mcpsite.settings")

from django.core.asgi import get_asgi_application

django_application = get_asgi_application()

from mcp_protocol.transports import runtime  # noqa: E402
from mcp_protocol.transports.http import MCPEndpoint  # noqa: E402

mcp_application = MCPEndpoint()
MCP_PATHS = frozenset({"/mcp", "/mcp/"})


async def lifespan(scope: Any, receive: Any, send: Any) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await runtime.shutdown()
            await send({"type": "lifespan.shutdown.complete"})
            return


async def application(scope: Any, receive: Any, send: Any) -> None:
    kind = scope["type"]
    if kind == "http" and scope["path"] in MCP_PATHS:
        await mcp_application(scope, receive, send)
    elif kind == "lifespan":
        await lifespan(scope, receive, send)
    else:
        await django_application(scope, receive, send)
