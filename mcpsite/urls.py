"""Django's URLs: the landing page (``landing.py``), the admin, the REST management API
(``/api/v1/``) and the operations endpoints (``health.py``). ``/mcp`` is not here: ``mcpsite/asgi.py``
routes it to the MCP endpoint directly, beside Django."""

from django.contrib import admin
from django.urls import include, path

from access.views import protected_resource_metadata
from mcpsite import health, landing

urlpatterns = [
    path("", landing.index, name="index"),
    path("admin/", admin.site.urls),
    # RFC 9728 protected resource metadata for /mcp (MCP_AUTH with oauth).
    path(".well-known/oauth-protected-resource", protected_resource_metadata),
    path(".well-known/oauth-protected-resource/mcp", protected_resource_metadata),
    path("api/v1/", include("management_api.urls")),
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
    path("metrics", health.metrics_view, name="metrics"),
]
