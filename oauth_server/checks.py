"""System checks of the built-in authorization server: ``MCP_OAUTH_ISSUER=self`` needs a mode
that verifies OAuth tokens, its issuer is https in production, and CIMD from private addresses is
for development only."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.checks import Error, Warning, register

from mcp_django.conf import access_settings

from .conf import server_settings


@register()
def check_oauth_server(app_configs: Any = None, **kwargs: Any) -> list[Any]:
    config = access_settings()
    if not config["OAUTH_SELF"]:
        return []
    messages: list[Any] = []
    if "oauth" not in str(config["MODE"]):
        messages.append(
            Error(
                "MCP_OAUTH_ISSUER=self but MCP_AUTH does not include oauth: the tokens "
                "this server issues would be refused on /mcp",
                id="oauth_server.E001",
                hint="Set MCP_AUTH=oauth (or keys,oauth).",
            )
        )
    if not settings.DEBUG and not str(config["OAUTH_ISSUER"]).startswith("https://"):
        messages.append(
            Warning(
                f"the built-in authorization server's issuer {config['OAUTH_ISSUER']} is not https "
                "(RFC 8414 §2, OAuth 2.1 §1.5): clients may refuse it",
                id="oauth_server.W002",
                hint="Set MCP_RESOURCE_URL to the public https URL of /mcp; the issuer is its origin.",
            )
        )
    if server_settings()["CIMD_ALLOW_PRIVATE"] and not settings.DEBUG:
        messages.append(
            Warning(
                "MCP_OAUTH_CIMD_ALLOW_PRIVATE lets any client make this server fetch "
                "from your private network",
                id="oauth_server.W001",
            )
        )
    return messages
