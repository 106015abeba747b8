"""ASGI entry point (uvicorn or daphne): ``mcpsite.asgi:application``.

Routed through Channels like any project that takes in mcpsite (docs/guides/django-project.md):
``/mcp`` (and ``/mcp/``) goes to the MCP endpoint, a plain ASGI app, through ``URLRouter``;
everything else — the landing page, the admin, the REST API — is Django's ASGI handler. The
endpoint is not behind Django's handler: measured before choosing, that handler with this project's
MIDDLEWARE costs milliseconds per request for a trivial async view (signal handlers and sync
middleware run through thread hops), against about 1 µs for a bare ASGI callable; the endpoint
needs nothing from that stack (its own auth seam, no templates, no ORM on the hot path). Channels'
router costs a path comparison and a scope copy per request, about 3 % of the server-side CPU of a
served tools/call (bench/results/2026-11-24-routing-through-channels.md), and its scope copy lives
as long as a GET stream (~1.2 KB per idle stream): ``EndpointFirst`` sends ``/mcp``, ``/mcp/`` and
the virtual servers' ``/mcp/<slug>`` straight to the endpoint, and the router behind it still
routes them too (under a ``root_path``, and for the system check that looks for the endpoint),
exactly as a project that embeds mcpsite routes them.

The ``lifespan`` scope (sent by uvicorn, not by daphne) runs the MCP runtime from startup (which
also tunes the GC for long-lived streams: ``mcp_protocol/transports/gc_tuning.py``) to shutdown.
The routes and the lifespan are handed the process's MCP service (``mcp_django/service.py``), the
same one ``urls.py`` hands to the operations views and the management API.

Run: ``uvicorn mcpsite.asgi:application --host 127.0.0.1 --port 8000``
(or ``daphne -b 127.0.0.1 -p 8000 mcpsite.asgi:application``, or ``manage.py runserver``).
"""

from __future__ import annotations

import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mcpsite.settings")

from django.core.asgi import get_asgi_application

from mcpsite.environment import one_line_errors

with one_line_errors():  # a bad environment variable: one line naming it, not a traceback
    django_application = get_asgi_application()

from channels.routing import ProtocolTypeRouter, URLRouter
from django.urls import re_path

from mcp_django.routing import EndpointFirst, legacy_sse_paths, lifespan, mcp_path, mcp_servers_path
from mcp_django.service import get_service

service = get_service()
mcp_route = mcp_path("mcp", service=service)
router = ProtocolTypeRouter(
    {
        "http": URLRouter(
            [
                mcp_route,
                # /mcp/<slug>: the virtual servers (docs/reference/endpoint.md); paths below a
                # slug (/mcp/<slug>/server-card) go on to Django.
                mcp_servers_path(mcp_route),
                # /sse + /messages (and /sse/<slug>): the deprecated 2024-11-05 HTTP+SSE transport.
                *legacy_sse_paths(service=service),
                re_path(r"", django_application),
            ]
        ),
        "lifespan": lifespan,
    }
)
application = EndpointFirst(router, mcp_route, servers=True)
