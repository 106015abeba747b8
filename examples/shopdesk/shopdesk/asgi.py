"""The project's ASGI routing: Django, its own websocket consumer, and MCP under /internal/mcp.

Adding MCP is the ``mcp_path(...)`` line (and ``lifespan`` for uvicorn)."""

import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "shopdesk.settings")

from django.core.asgi import get_asgi_application

django_application = get_asgi_application()  # first: sets Django up before the imports below

from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from django.urls import path, re_path  # noqa: E402
from orders.consumers import OrderFeedConsumer  # noqa: E402

from mcp_django.routing import lifespan, mcp_path  # noqa: E402

application = ProtocolTypeRouter(
    {
        "http": URLRouter([mcp_path("internal/mcp"), re_path(r"", django_application)]),
        "websocket": URLRouter([path("ws/orders/", OrderFeedConsumer.as_asgi())]),
        "lifespan": lifespan,
    }
)
