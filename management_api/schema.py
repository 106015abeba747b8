"""OpenAPI additions drf-spectacular cannot infer, and the docs page.

- The management API token as an HTTP bearer security scheme.
- The JSON fields' shape (``parsers.JSONField.shape``): ``type: object`` or ``type: array`` where
  the model's values are one of those, rather than "any value".
- The docs page (``/api/v1/docs/``) sends a browser that is not signed in as staff to the admin's
  login, and back after it, rather than answering the bare 401 of the API.

``urls.py`` imports this module, which registers the extensions.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.views import redirect_to_login
from django.http import HttpResponseBase
from django.urls import reverse
from drf_spectacular.extensions import OpenApiAuthenticationExtension, OpenApiSerializerFieldExtension
from drf_spectacular.views import SpectacularSwaggerView
from rest_framework import exceptions


class ManagementTokenScheme(OpenApiAuthenticationExtension):  # type: ignore[misc]
    target_class = "management_api.auth.ManagementTokenAuthentication"
    name = "managementToken"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "A management API token (mcpm_…): manage.py create_management_token, "
            "or the admin's Management API tokens page.",
        }


class JSONFieldShape(OpenApiSerializerFieldExtension):  # type: ignore[misc]
    target_class = "management_api.parsers.JSONField"

    def map_serializer_field(self, auto_schema: Any, direction: str) -> dict[str, Any]:
        shape = self.target.shape
        if shape == "object":
            return {"type": "object", "additionalProperties": {}}
        if shape == "array":
            return {"type": "array", "items": {}}
        return {}  # any JSON value (its help text says which)


class DocsView(SpectacularSwaggerView):
    """The Swagger UI page, for staff; anyone else is sent to the admin's login."""

    def handle_exception(self, exc: Exception) -> HttpResponseBase:
        if isinstance(exc, exceptions.NotAuthenticated | exceptions.PermissionDenied):
            return redirect_to_login(self.request.get_full_path(), reverse("admin:login"))
        response: HttpResponseBase = super().handle_exception(exc)
        return response
