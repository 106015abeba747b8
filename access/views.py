"""RFC 9728 Protected Resource Metadata for ``/mcp`` and for each virtual server ``/mcp/<slug>``
(MCP basic/authorization.mdx, 2025-06-18+: servers MUST implement it; clients find it through
``resource_metadata`` in the 401 challenge or at the well-known URI).

- ``/.well-known/oauth-protected-resource/mcp`` (RFC 9728 §3.1: the well-known segment goes before
  the resource's path) and the root form, which clients of the 2025-06-18 era try first: ``/mcp``'s.
  404 unless ``MCP_AUTH`` includes ``oauth``.
- ``/.well-known/oauth-protected-resource/mcp/<slug>``: the virtual server's (issue 39): its own
  resource URL (a token's audience, RFC 8707), the scopes it asks for (its own, else the
  deployment's), the same authorization server. 404 with a JSON body for a slug that is unknown,
  disabled, or whose server takes no OAuth token (``mcp_django.virtual_servers.takes_tokens``).
"""

from __future__ import annotations

from typing import Any

from django.http import Http404, HttpRequest, JsonResponse

from mcp_django import virtual_servers
from mcp_django.conf import access_settings
from mcp_protocol.endpoints import EndpointSpec


def _metadata(spec: EndpointSpec | None) -> JsonResponse:
    config = access_settings()
    scopes = sorted(config["OAUTH_SCOPES"])
    if spec is not None and spec.access.scopes is not None:
        scopes = sorted(spec.access.scopes)
    body: dict[str, Any] = {
        "resource": virtual_servers.resource_url(spec),
        "authorization_servers": [config["OAUTH_ISSUER"]],
        "scopes_supported": scopes,
        "bearer_methods_supported": ["header"],
        "resource_name": "mcpsite" if spec is None else (spec.title or spec.name),
    }
    response = JsonResponse(body)
    response["Access-Control-Allow-Origin"] = "*"  # public metadata, read by browser clients
    response["Cache-Control"] = "max-age=300"
    return response


def protected_resource_metadata(request: HttpRequest) -> JsonResponse:
    if "oauth" not in str(access_settings()["MODE"]):
        raise Http404("this server does not accept OAuth access tokens")
    return _metadata(None)


def endpoint_metadata(request: HttpRequest, slug: str) -> JsonResponse:
    spec = virtual_servers.enabled(slug)
    if spec is None or not virtual_servers.takes_tokens(spec):
        # The same answer for a server that does not exist and one that takes no token: the
        # metadata tells nothing the endpoint itself would not (it answers 404 too when unknown).
        response = JsonResponse({"error": "not_found",
                                 "error_description": "no protected resource at this path"}, status=404)
        response["Access-Control-Allow-Origin"] = "*"
        return response
    return _metadata(spec)
