"""Django's URLs: the landing page and the admin. ``/mcp`` is not here: ``mcpsite/asgi.py`` routes
it to the MCP endpoint directly, beside Django."""

from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import path

from mcpsite import health


def index(request: HttpRequest) -> HttpResponse:
    """The landing page: where to point an MCP client, and the admin."""
    return render(request, "index.html", {"mcp_url": request.build_absolute_uri("/mcp")})


urlpatterns = [
    path("", index, name="index"),
    path("admin/", admin.site.urls),
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
    path("metrics", health.metrics_view, name="metrics"),
]
