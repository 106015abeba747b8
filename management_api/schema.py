"""OpenAPI additions drf-spectacular cannot infer: the management API token as an HTTP bearer
security scheme (imported by ``urls.py``, which registers it)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension


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
