"""Django's URLs: the landing page (``landing.py``), the admin, the REST management API
(``/api/v1/``) and the operations endpoints (``health.py``). ``/mcp`` is not here: ``mcpsite/asgi.py``
routes it to the MCP endpoint directly, beside Django. The views that read the MCP runtime (the
landing page's counts, the probes, the metrics) are handed the process's MCP service as an argument."""

from django.contrib import admin
from django.urls import include, path

from access.views import endpoint_metadata, protected_resource_metadata
from mcp_django.service import get_service
from mcpsite import health, landing, server_cards
from oauth_server import urls as oauth_server_urls
from oauth_server.sign_in_limits import sign_in_limited

mcp = {"service": get_service()}
admin.site.site_header = "mcpsite administration"
admin.site.site_title = "mcpsite admin"
admin.site.index_title = "Definitions, keys, sessions and history"

urlpatterns = [
    path("", landing.index, mcp, name="index"),
    # The admin's sign-in with a bound on password guesses (issue 37 item 7), before admin/ so it
    # answers admin:login's path.
    path("admin/login/", sign_in_limited(admin.site.login)),
    path("admin/", admin.site.urls),
    # RFC 9728 protected resource metadata for /mcp (MCP_AUTH with oauth).
    path(".well-known/oauth-protected-resource", protected_resource_metadata),
    path(".well-known/oauth-protected-resource/mcp", protected_resource_metadata),
    # ... and for each virtual server /mcp/<slug> (issue 39; RFC 9728 §3.1).
    path(".well-known/oauth-protected-resource/mcp/<str:slug>", endpoint_metadata),
    # Discovery (issue 39): a Server Card per endpoint and the site's AI Catalog (server_cards.py).
    # /mcp/<slug>/... falls through the ASGI router to Django; "server-card" is no slug (reserved).
    path("mcp/server-card", server_cards.server_card, name="server_card"),
    path("mcp/<str:slug>/server-card", server_cards.server_card, name="endpoint_server_card"),
    path(".well-known/ai-catalog.json", server_cards.ai_catalog, name="ai_catalog"),
    # The built-in OAuth authorization server (MCP_OAUTH_ISSUER=self; 404 otherwise).
    *oauth_server_urls.well_known,
    path("oauth/", include(oauth_server_urls)),
    path("api/v1/", include("management_api.urls")),
    path("connect/", include("connections.urls")),
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, mcp, name="readyz"),
    path("metrics", health.metrics_view, mcp, name="metrics"),
]
