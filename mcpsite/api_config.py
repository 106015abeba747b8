"""The management API's Django REST framework and drf-spectacular configuration
(``REST_FRAMEWORK``, ``SPECTACULAR_SETTINGS``): its authentication, permissions, throttles,
parsers and OpenAPI document. ``settings.py`` reads the environment and passes the throttle rates.
"""

from __future__ import annotations

from typing import Any


def rest_framework(anon_rate: str, user_rate: str) -> dict[str, Any]:
    """``REST_FRAMEWORK``, with the throttle rates of anonymous and signed-in callers."""
    return {
        # Tokens first: the first class names the WWW-Authenticate challenge of a 401.
        "DEFAULT_AUTHENTICATION_CLASSES": [
            "management_api.auth.ManagementTokenAuthentication",
            "rest_framework.authentication.SessionAuthentication",
        ],
        "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAdminUser"],
        "DEFAULT_THROTTLE_CLASSES": [
            "management_api.auth.AnonRateThrottle",
            "management_api.auth.UserRateThrottle",
        ],
        "DEFAULT_THROTTLE_RATES": {
            "anon": anon_rate,
            "user": user_rate,
        },
        # DRF's, with the JSON parser's nesting bounded (a body too deep to parse was a 500).
        "DEFAULT_PARSER_CLASSES": [
            "management_api.parsers.JSONParser",
            "rest_framework.parsers.FormParser",
            "rest_framework.parsers.MultiPartParser",
        ],
        "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
        "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
        # Errors of list items keyed by index (DRF 3.20's only form; the list form is deprecated).
        "LIST_SERIALIZER_ERRORS_AS_DICT": True,
        # A throttled client is REMOTE_ADDR, which the ASGI server sets from X-Forwarded-For only when
        # the trusted balancer sent it; DRF's default would count the raw header, which any client
        # writes (issue 24 item 11).
        "NUM_PROXIES": 0,
    }


SPECTACULAR: dict[str, Any] = {
    "TITLE": "mcpsite management API",
    "DESCRIPTION": "Tools, resources, resource templates and prompts of the MCP registry; live MCP "
    "sessions; import and export of the whole registry. Writes reach every connected MCP client.",
    "VERSION": "1",
    "OAS_VERSION": "3.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAdminUser"],
    "SWAGGER_UI_DIST": "SIDECAR",  # local assets: a deployment may have no internet
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    # Bodies are documented as JSON only: the form parsers stay for the browsable API's HTML forms,
    # which no client of the document needs (and which read JSON fields as strings).
    "PARSER_WHITELIST": ["management_api.parsers.JSONParser"],
}
