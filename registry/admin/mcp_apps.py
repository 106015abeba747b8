"""The admin's live preview of an MCP App view: the stored HTML in a sandboxed iframe, served
under the CSP its resource declares (``apps_ui.content_security_policy``), so what a host would
block is blocked here too, and a view can never script the admin.

The iframe is ``sandbox="allow-scripts"`` (no ``allow-same-origin``: an opaque origin, no cookies,
no access to the admin's DOM), and its document's response adds ``sandbox allow-scripts`` to the
CSP so the view stays sandboxed even when opened directly.
"""

from __future__ import annotations

from typing import Any

from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.urls import reverse
from django.utils.html import format_html
from django.views.decorators.clickjacking import xframe_options_sameorigin

from ..models.resources import Resource
from ..validation.apps_ui import content_security_policy, is_app_mime


def preview_frame(resource: Resource | None) -> str:
    if resource is None or resource.pk is None or not is_app_mime(resource.mime_type):
        return "—"
    src = reverse("admin:registry_resource_app_view", args=[resource.pk])
    return format_html(
        '<iframe class="mcp-app-preview" sandbox="allow-scripts" src="{}" title="{}" '
        'style="width:100%;height:320px;border:1px solid #ccc"></iframe>',
        src, resource.uri,
    )


@xframe_options_sameorigin
def app_view(model_admin: Any, request: HttpRequest, object_id: str) -> HttpResponse:
    """The view's HTML, under its declared CSP (for the preview iframe): for whoever may view the
    resource in the admin, as its change page (issue 37 item 7: any staff user read it)."""
    if not model_admin.has_view_or_change_permission(request):
        raise PermissionDenied
    # The admin's own lookup: an id that is no primary key ("abc") is a missing object, a 404,
    # not the ValueError (500) of a bare pk= filter.
    resource = model_admin.get_object(request, unquote(object_id))
    if resource is None or not is_app_mime(resource.mime_type) or resource.kind != Resource.Kind.TEXT:
        raise Http404("No app view")
    response = HttpResponse(resource.text, content_type="text/html; charset=utf-8")
    policy = content_security_policy(resource.ui_csp or {})
    response["Content-Security-Policy"] = f"{policy}; sandbox allow-scripts"
    response["Cache-Control"] = "no-store"
    return response
