"""Django's URLs: the landing page and the admin. ``/mcp`` is not here: ``mcpsite/asgi.py`` routes
it to the MCP endpoint directly, beside Django."""

from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import path

from access.views import protected_resource_metadata
from mcp_protocol.auth.access import access_settings


def index(request: HttpRequest) -> HttpResponse:
    """The landing page: where to point an MCP client, and the admin."""
    mode = str(access_settings()["MODE"])
    return render(request, "index.html", {"mcp_url": request.build_absolute_uri("/mcp"), "auth_mode": mode})


urlpatterns = [
    path("", index, name="index"),
    path("admin/", admin.site.urls),
    # RFC 9728 protected resource metadata for /mcp (MCP_AUTH with oauth).
    path(".well-known/oauth-protected-resource", protected_resource_metadata),
    path(".well-known/oauth-protected-resource/mcp", protected_resource_metadata),
]
