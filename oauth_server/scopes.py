"""The scopes the built-in server grants: exactly ``MCP["ACCESS"]["OAUTH_SCOPES"]``, the map the
resource server turns into a grant (scope → tools/resources/prompts/tags), so what the consent page
shows, what the token carries and what ``/mcp`` allows are one list. Each is described in words
from its grant (``describe``)."""

from __future__ import annotations

from typing import Any

from oauth2_provider.scopes import BaseScopes

from mcp_django.conf import access_settings

KINDS = (("tools", "tools"), ("resources", "resources"), ("prompts", "prompts"))


def scopes_map() -> dict[str, Any]:
    return dict(access_settings()["OAUTH_SCOPES"] or {})


def describe(spec: Any) -> str:
    """``{"tools": ["add"], "tags": ["docs"]}`` → "Use the tools add; anything tagged docs"."""
    if not isinstance(spec, dict) or not spec:
        return "Use every tool, resource and prompt of this server"
    parts = []
    for key, noun in KINDS:
        names = spec.get(key)
        if names is None:
            continue
        if "*" in names:
            parts.append(f"use every one of its {noun}")
        elif names:
            parts.append(f"use the {noun} {', '.join(sorted(map(str, names)))}")
    if spec.get("tags"):
        parts.append(f"use anything tagged {', '.join(sorted(map(str, spec['tags'])))}")
    text = "; ".join(parts) or "nothing yet (the scope grants no definition)"
    return text[0].upper() + text[1:]


class MCPScopes(BaseScopes):  # type: ignore[misc]
    def get_all_scopes(self) -> dict[str, str]:
        return {scope: describe(spec) for scope, spec in scopes_map().items()}

    def get_available_scopes(
        self, application: Any = None, request: Any = None, *args: Any, **kwargs: Any
    ) -> list[str]:
        return sorted(scopes_map())

    def get_default_scopes(
        self, application: Any = None, request: Any = None, *args: Any, **kwargs: Any
    ) -> list[str]:
        # A client that asks for no scope gets every one (MCP clients take scopes from the
        # resource metadata or the 401's scope=; one that sends none wants what it may have).
        return sorted(scopes_map())
