"""RFC 9728 Protected Resource Metadata for ``/mcp`` (MCP basic/authorization.mdx, 2025-06-18+:
servers MUST implement it; clients find it through ``resource_metadata`` in the 401 challenge or
at the well-known URI). Served at ``/.well-known/oauth-protected-resource/mcp`` (RFC 9728 §3.1:
the well-known segment goes before the resource's path) and at the root form, which clients of
the 2025-06-18 era try first. 404 unless ``MCP_AUTH`` includes ``oauth``."""

from __future__ import annotations

from django.http import Http404, HttpRequest, JsonResponse

from mcp_django.conf import access_settings


def protected_resource_metadata(request: HttpRequest) -> JsonResponse:
    config = access_settings()
    if "oauth" not in str(config["MODE"]):
        raise Http404("this server does not accept OAuth access tokens")
    body = {
        "resource": config["RESOURCE_URL"],
        "authorization_servers": [config["OAUTH_ISSUER"]],
        "scopes_supported": sorted(config["OAUTH_SCOPES"]),
        "bearer_methods_supported": ["header"],
        "resource_name": "mcpsite",
    }
    response = JsonResponse(body)
    response["Access-Control-Allow-Origin"] = "*"  # public metadata, read by browser clients
    response["Cache-Control"] = "max-age=300"
    return response
