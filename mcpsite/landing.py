"""The landing page at ``/``: where to point an MCP client (with ready-to-paste configurations;
one per virtual server ``/mcp/<slug>`` too), what the server holds now (tools, resources,
prompts, live sessions, open streams), and links to the admin and the API docs. Async, so the
live counts come from this loop's MCP runtime, held by the MCP service ``urls.py`` hands it."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import NoReverseMatch, reverse

from mcp_django import virtual_servers
from mcp_django.conf import access_settings, mcp_settings
from mcp_protocol.transports import metrics
from mcp_protocol.transports.host import RuntimeHost
from mcpsite.clients import client_configs, endpoint_config

logger = logging.getLogger("mcpsite.landing")


async def _served_counts(service: RuntimeHost) -> dict[str, Any]:
    """What clients are served: the provider's snapshot, so definitions written in Python
    (registry.code) count beside the database's rows, and a row hidden by one does not."""
    try:
        async with asyncio.timeout(3):
            snapshot = (await service.runtime()).provider.snapshot()
    except Exception:  # the runtime cannot start (Redis down): the page still answers
        logger.warning("landing page: MCP runtime unavailable", exc_info=True)
        kinds = ("tools", "resources", "resource templates", "prompts", "skills", "apps")
        return dict.fromkeys(kinds, "unavailable")
    return {
        "tools": len(snapshot.tools),
        "resources": len(snapshot.resources),
        "resource templates": len(snapshot.resource_templates),
        "prompts": len(snapshot.prompts),
        "skills": len(snapshot.skills),  # the demo's bundled ones from the first run (load_demo)
        "apps": sum(1 for tool in snapshot.tools if _app_view(tool.meta)),  # tools with a ui:// view
    }


def _app_view(meta: Any) -> bool:
    ui = (meta or {}).get("ui") if isinstance(meta, dict) else None
    return isinstance(ui, dict) and bool(ui.get("resourceUri"))


async def _live_counts(service: RuntimeHost) -> dict[str, Any]:
    try:
        async with asyncio.timeout(3):
            sessions: Any = await (await service.runtime()).sessions.count()
    except Exception:  # Redis down: the page still answers
        logger.warning("landing page: session store unavailable", exc_info=True)
        sessions = "unavailable"
    streams: Any = int(metrics.open_streams()) if mcp_settings.METRICS else "n/a"
    # Open streams: this process, or every worker of this host with PROMETHEUS_MULTIPROC_DIR.
    return {"live sessions": sessions, "open streams": streams}


def _url(name: str) -> str | None:
    try:
        return str(reverse(name))
    except NoReverseMatch:
        return None


async def _endpoints(request: HttpRequest) -> list[dict[str, Any]]:
    """The enabled virtual servers (issue 39), each with its URL, the auth it asks for, its server
    card and a configuration to paste."""
    try:
        specs = await sync_to_async(virtual_servers.all_enabled)()
    except Exception:  # the database is down: the page still answers
        logger.warning("landing page: virtual servers unavailable", exc_info=True)
        return []
    listed = []
    for spec in specs:
        url = request.build_absolute_uri(spec.route)
        keys = virtual_servers.takes_keys(spec) and not virtual_servers.open_to_anyone(spec)
        listed.append({
            "slug": spec.slug, "title": spec.title or spec.name, "description": spec.description, "url": url,
            "card_url": f"{spec.route}/server-card", "oauth": virtual_servers.takes_tokens(spec),
            "open": virtual_servers.open_to_anyone(spec), "keys": virtual_servers.takes_keys(spec),
            "config": endpoint_config(spec.slug, url, token="mcp_…" if keys else None),
        })
    return listed


async def index(request: HttpRequest, service: RuntimeHost) -> HttpResponse:
    mcp_url = request.build_absolute_uri("/mcp")
    access = access_settings()
    mode = str(access["MODE"])
    counts = {**await _served_counts(service), **await _live_counts(service)}
    context = {
        "mcp_url": mcp_url,
        "counts": counts,
        "configs": client_configs(mcp_url, stdio=settings.DEBUG, token=None if mode == "open" else "mcp_…"),
        "auth_mode": mode,
        # The built-in authorization server (oauth_server): what to paste as a connector's URL in
        # Claude.ai, ChatGPT or VS Code; the canonical resource URL, the token's audience.
        "connector_url": access["RESOURCE_URL"] if access["OAUTH_SELF"] else None,
        "my_clients_url": _url("oauth_server_clients") if access["OAUTH_SELF"] else None,
        "admin_url": _url("admin:index"),
        "api_docs_url": _url("api:docs"),
        "debug": settings.DEBUG,
        "endpoints": await _endpoints(request),
    }
    return render(request, "index.html", context)
