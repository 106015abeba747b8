"""Discovery (issue 39 item 6): a Server Card per MCP endpoint and the site's AI Catalog, in the
shapes of the experimental server-card extension, ``modelcontextprotocol/experimental-ext-server-card``
at commit 8924e08682b4a936e6464b57845ec2ff17dc8776 (``docs/discovery.md``, ``schema.ts``).

- ``GET /mcp/<slug>/server-card`` (and ``/mcp/server-card`` for the catch-all ``/mcp``): the
  card, ``application/mcp-server-card+json`` ("Hosted Server Card Location": the card MAY sit at
  ``<streamable-http-url>/server-card``). 404 (JSON) for a slug that is unknown or disabled.
- ``GET /.well-known/ai-catalog.json``: the catalog (``specVersion`` 1.0, one entry per enabled
  server and one for ``/mcp``, each pointing at its card by ``url``), ``application/ai-catalog+json``.

What a card says: ``name`` (reverse DNS of the host, ``/`` and the slug), ``version``,
``description``, ``title``, ``websiteUrl``, ``icons``; ``remotes``: the streamable HTTP URL and
the legacy SSE one, with the revisions served, and an ``Authorization`` header described when the
endpoint takes API keys (required unless it is open too); under ``_meta`` (reverse-DNS keys,
the card's extension point) the auth modes it accepts, where its RFC 9728 metadata is when it
takes OAuth tokens, and the capabilities it declares. Never its tools, resources or prompts (the
extension: "Server Cards do not enumerate primitives"), its instructions, or the keys and scopes
that may use it: a card is public, read by anyone, and a keyed endpoint's definitions are for its
callers only ("Information Disclosure": no proprietary logic, no credentials).

Caching ("Caching"): ``Cache-Control: public, max-age=300`` (an edited server shows within five
minutes), an ``ETag`` of the body and ``304`` for a matching ``If-None-Match``; CORS as "CORS
Requirements" lists. Read from the database (``mcp_django.virtual_servers``), off the MCP hot path.
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
from dataclasses import replace
from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse

from mcp_django import virtual_servers
from mcp_django.conf import access_settings, mcp_settings
from mcp_protocol import versions
from mcp_protocol.auth import endpoint_access
from mcp_protocol.endpoints import OFF, EndpointSpec

FOLLOWED = "modelcontextprotocol/experimental-ext-server-card@8924e08682b4a936e6464b57845ec2ff17dc8776"
SCHEMA = "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json"
CARD_TYPE = "application/mcp-server-card+json"
CATALOG_TYPE = "application/ai-catalog+json"
META = "io.mcpsite"  # our keys under a card's _meta (reverse DNS, as the schema asks)
CATCH_ALL_NAME = "_all"  # the catch-all's name in identifiers: never a slug (slugs start [a-z0-9])
MAX_TEXT = 100  # description and title: at most 100 characters (schema.ts)
CORS = {
    "Access-Control-Allow-Origin": "*",
    "Access-Control-Allow-Methods": "GET",
    "Access-Control-Allow-Headers": "Content-Type, If-None-Match",
    "Access-Control-Expose-Headers": "ETag",
}


def _host(request: HttpRequest) -> str:
    return request.get_host().rsplit(":", 1)[0].strip("[]") if request.get_host() else "localhost"


def _reverse_dns(host: str) -> str:
    """``mcp.example.com`` → ``com.example.mcp``; an IP address stays as it is."""
    try:
        ipaddress.ip_address(host)
        return host.replace(":", "-")
    except ValueError:
        return ".".join(reversed(host.split(".")))


def _auth(spec: EndpointSpec | None) -> dict[str, Any]:
    modes = endpoint_access.deployment_modes(str(access_settings()["MODE"]))
    accepted = modes if spec is None else endpoint_access.accepted(spec, modes)
    auth: dict[str, Any] = {"modes": sorted(accepted)}
    if virtual_servers.takes_tokens(spec):
        auth["resourceMetadata"] = endpoint_access.metadata_url(virtual_servers.resource_url(spec))
    return auth


def _remote(kind: str, url: str, spec: EndpointSpec | None, served: list[str]) -> dict[str, Any]:
    remote: dict[str, Any] = {"type": kind, "url": url, "supportedProtocolVersions": served}
    if virtual_servers.takes_keys(spec):
        remote["headers"] = [{
            "name": "Authorization",
            "description": "An API key of this site, as a bearer token.",
            "isRequired": not virtual_servers.open_to_anyone(spec),
            "isSecret": True,
            "value": "Bearer {api_key}",
            "variables": {"api_key": {"description": "An API key (mcp_...).", "isRequired": True,
                                      "isSecret": True}},
        }]
    return remote


def card(request: HttpRequest, spec: EndpointSpec | None, at_root: bool = False) -> dict[str, Any]:
    """The Server Card of ``/mcp`` (``spec`` None) or of the virtual server ``spec`` (served at
    ``/mcp`` itself when ``at_root``: ``MCP['DEFAULT_SERVER']`` names it)."""
    path = "/mcp" if spec is None or at_root else spec.route
    legacy = "/sse" if spec is None or at_root else f"/sse/{spec.slug}"
    if spec is None:
        name, title = str(mcp_settings.SERVER_NAME), mcp_settings.SERVER_TITLE
        version, description, website, icons = mcp_settings.SERVER_VERSION, None, None, None
    else:
        name, title, version = spec.name, spec.title, spec.version
        description, website, icons = spec.description, spec.website_url, spec.icons
    slug = CATCH_ALL_NAME if spec is None else spec.slug
    body: dict[str, Any] = {
        "$schema": SCHEMA,
        "name": f"{_reverse_dns(_host(request))}/{slug}",
        "version": str(version),
        "description": (description or title or name)[:MAX_TEXT],
    }
    if title:
        body["title"] = str(title)[:MAX_TEXT]
    if website:
        body["websiteUrl"] = website
    if icons:
        body["icons"] = list(icons)
    body["remotes"] = [
        _remote("streamable-http", request.build_absolute_uri(path), spec,
                list(versions.SUPPORTED_NEWEST_FIRST)),
        # The HTTP+SSE transport of 2024-11-05, kept for old clients (transports/legacy_sse.py).
        _remote("sse", request.build_absolute_uri(legacy), spec, [versions.V2024_11_05]),
    ]
    capabilities = mcp_settings.backend("PROVIDER").capabilities
    body["_meta"] = {
        f"{META}/auth": _auth(spec),
        f"{META}/capabilities": sorted(k for k in ("tools", "resources", "prompts", "completions", "logging")
                                       if getattr(capabilities, k, False)),
        f"{META}/serverInfoName": name,
    }
    return body


def _cached(request: HttpRequest, body: dict[str, Any], content_type: str) -> HttpResponse:
    text = json.dumps(body, sort_keys=True, separators=(",", ":"))
    etag = '"' + hashlib.sha256(text.encode()).hexdigest()[:32] + '"'
    matches = {t.strip() for t in request.headers.get("If-None-Match", "").split(",")}
    response = HttpResponse(status=304) if etag in matches or "*" in matches else \
        HttpResponse(text, content_type=content_type)
    response["ETag"] = etag
    response["Cache-Control"] = "public, max-age=300"
    for name, value in CORS.items():
        response[name] = value
    return response


def _not_found() -> JsonResponse:
    response = JsonResponse({"error": "not_found", "error_description": "no MCP server at this path"},
                            status=404)
    response["Access-Control-Allow-Origin"] = "*"
    return response


def _root() -> tuple[bool, EndpointSpec | None]:
    """What ``/mcp`` serves (``MCP['DEFAULT_SERVER']``): (served at all, the virtual server it is
    or None for the catch-all)."""
    default = mcp_settings.DEFAULT_SERVER
    if default is None:
        return True, None
    if default == OFF:
        return False, None
    spec = virtual_servers.enabled(str(default))
    return spec is not None, spec


def server_card(request: HttpRequest, slug: str | None = None) -> HttpResponse:
    if slug is None:
        served, spec = _root()
        if not served:
            return _not_found()
        spec = None if spec is None else replace(spec, at_root=True)
        return _cached(request, card(request, spec, at_root=True), CARD_TYPE)
    spec = virtual_servers.enabled(slug)
    if spec is None:
        return _not_found()
    return _cached(request, card(request, spec), CARD_TYPE)


def ai_catalog(request: HttpRequest) -> HttpResponse:
    host = _host(request)
    entries = []
    if _root()[0]:  # /mcp, unless MCP['DEFAULT_SERVER'] turns it off (or names no enabled server)
        entries.append({"identifier": f"urn:air:{host}:mcp:{CATCH_ALL_NAME}", "type": CARD_TYPE,
                        "url": request.build_absolute_uri("/mcp/server-card")})
    entries += [{"identifier": f"urn:air:{host}:mcp:{spec.slug}", "type": CARD_TYPE,
                 "url": request.build_absolute_uri(f"{spec.route}/server-card")}
                for spec in virtual_servers.all_enabled()]
    return _cached(request, {"specVersion": "1.0", "entries": entries}, CATALOG_TYPE)
