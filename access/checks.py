"""System checks of who may call ``/mcp`` (``manage.py check``, and at every start).

The one that matters most: open mode (no authentication) with ``DEBUG`` off and an allowed host
that is not loopback is an error, so a production deployment cannot be open by accident. The rest
name a bad ``MCP["ACCESS"]`` value at startup rather than at the first request.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.checks import CheckMessage, Error, register

from mcp_django.conf import DEFAULTS, access_settings, mcp_settings
from mcp_protocol.auth.oauth import SAFE_ALGORITHMS
from mcp_protocol.auth.policy import MODES
from mcp_protocol.auth.principal import Grant, Rate

LOOPBACK = {"localhost", "127.0.0.1", "::1", "[::1]", ".localhost"}


def _loopback(host: str) -> bool:
    host = host.strip().lower()
    return host in LOOPBACK or host.startswith("127.") or host.endswith(".localhost")


def _open_in_production(mode: str) -> list[CheckMessage]:
    if mcp_settings.PRINCIPAL_RESOLVER != DEFAULTS["PRINCIPAL_RESOLVER"]:
        # Another resolver decides who calls (mcp_django.users.django_user): not open; MCP_AUTH must be
        # left at open then, or it would be ignored.
        if mode != "open":
            return [Error(f"MCP_AUTH={mode} and MCP['PRINCIPAL_RESOLVER'] both say who may call /mcp",
                          hint="Use one: unset MCP_PRINCIPAL_RESOLVER, or leave MCP_AUTH=open.",
                          id="mcp.E107")]
        return []
    hosts = [*settings.ALLOWED_HOSTS, *mcp_settings.ALLOWED_HOSTS]
    exposed = [h for h in hosts if not _loopback(h)]
    if mode != "open" or settings.DEBUG or not exposed:
        return []
    return [Error(
        f"MCP_AUTH=open with DEBUG off and non-loopback allowed hosts ({', '.join(exposed)}): "
        "anyone who can reach this server could call every tool",
        hint="Set MCP_AUTH=keys (API keys), oauth or keys,oauth; open mode is for local development.",
        id="mcp.E101")]


@register()
def check_access(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    config = access_settings()
    mode = str(config["MODE"]).replace(" ", "")
    if mode not in MODES:
        return [Error(f"MCP_AUTH must be one of {', '.join(MODES)}, not {mode!r}", id="mcp.E102")]
    messages = _open_in_production(mode)
    for name in ("RATE", "TOOL_RATE"):
        try:
            Rate.parse(config[name])
        except ValueError as exc:
            messages.append(Error(f"MCP['ACCESS'][{name!r}]: {exc}", id="mcp.E103"))
    for tool, spec in (config["TOOL_RATES"] or {}).items():
        try:
            Rate.parse(spec)
        except ValueError as exc:
            messages.append(Error(f"MCP['ACCESS']['TOOL_RATES'][{tool!r}]: {exc}", id="mcp.E103"))
    if "oauth" in mode:
        if not config["OAUTH_ISSUER"]:
            messages.append(Error("MCP_AUTH includes oauth but MCP_OAUTH_ISSUER is not set", id="mcp.E104"))
        unsafe = sorted(set(config["OAUTH_ALGORITHMS"]) - SAFE_ALGORITHMS)
        if unsafe:
            messages.append(Error(f"MCP_OAUTH_ALGORITHMS may not include {unsafe} (only asymmetric "
                                  "signatures: none and HS* are never accepted)", id="mcp.E105"))
        for scope, spec in (config["OAUTH_SCOPES"] or {}).items():
            try:
                Grant.from_spec(spec)
            except ValueError as exc:
                messages.append(Error(f"MCP_OAUTH_SCOPES[{scope!r}]: {exc}", id="mcp.E106"))
    return messages
