"""The enabled virtual servers (issue 39), as the Django views beside ``/mcp/<slug>`` read them:
the RFC 9728 metadata per endpoint (``access``), the resources the built-in authorization server
issues tokens for and its consent page (``oauth_server``), the server cards, the site catalog and
the home page (``mcpsite``).

Read from the registry's ``VirtualServer`` rows by app label (``apps.get_model``): the apps that
need them sit beside the registry in the layers (``pyproject.toml`` import-linter contracts) and
import nothing of it, and a project without the registry app has no virtual servers. These are
views, off the MCP hot path, which never reads the database: ``/mcp/<slug>`` itself is served from
the snapshot's ``EndpointSpec`` (``mcp_protocol/endpoints.py``). ``spec_of`` builds the spec of
a row the way the snapshot carries it.
"""

from __future__ import annotations

from typing import Any

from django.apps import apps

from mcp_protocol.auth import endpoint_access
from mcp_protocol.endpoints import EndpointSpec

from .conf import access_settings

MODEL = ("registry", "VirtualServer")


def _model() -> Any:
    if not apps.is_installed("registry"):
        return None
    return apps.get_model(*MODEL)


def enabled(slug: str) -> EndpointSpec | None:
    """The enabled virtual server ``slug``, or None (unknown, disabled, no registry)."""
    model = _model()
    if model is None:
        return None
    row = model.objects.filter(slug=slug, enabled=True).first()
    return None if row is None else spec_of(row)


def all_enabled() -> list[EndpointSpec]:
    """Every enabled virtual server, by slug."""
    model = _model()
    if model is None:
        return []
    return [spec_of(row) for row in model.objects.filter(enabled=True).order_by("slug")]


def spec_of(row: Any) -> EndpointSpec:
    """The ``EndpointSpec`` of a row, as the snapshot carries it (the model's own conversion,
    ``VirtualServer.endpoint_spec``: one place says how a row reads)."""
    spec: EndpointSpec = row.endpoint_spec()
    return spec


def resource_url(spec: EndpointSpec | None) -> str:
    """The canonical URL of ``/mcp`` (``spec`` None) or of a virtual server (RFC 8707 resource)."""
    return endpoint_access.resource_url(str(access_settings()["RESOURCE_URL"]), spec)


def takes_tokens(spec: EndpointSpec | None) -> bool:
    """Does the endpoint accept OAuth access tokens (an issuer configured, and ``oauth`` among the
    credentials it takes: ``endpoint_access.credential_kinds``)?"""
    config = access_settings()
    modes = endpoint_access.deployment_modes(str(config["MODE"]))
    if not config["OAUTH_ISSUER"]:
        return False
    kinds = modes if spec is None else endpoint_access.credential_kinds(spec, modes)
    return "oauth" in kinds


def takes_keys(spec: EndpointSpec | None) -> bool:
    modes = endpoint_access.deployment_modes(str(access_settings()["MODE"]))
    kinds = modes if spec is None else endpoint_access.credential_kinds(spec, modes)
    return "keys" in kinds


def open_to_anyone(spec: EndpointSpec | None) -> bool:
    """Does the endpoint let a caller without credentials in?"""
    modes = endpoint_access.deployment_modes(str(access_settings()["MODE"]))
    return "open" in (modes if spec is None else endpoint_access.accepted(spec, modes))
