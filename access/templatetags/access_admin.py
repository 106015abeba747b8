"""``{% open_auth_banner %}``: in the whole admin (templates/admin/base_site.html) while ``/mcp`` runs with
``MCP_AUTH=open``, a warning that the keys made here are not enforced (every caller is anonymous
and may call everything), so nobody hands out a key believing it limits anything."""

from __future__ import annotations

from typing import Any

from django import template

from mcp_django.conf import access_settings

register = template.Library()


def auth_mode() -> str:
    return str(access_settings()["MODE"]).replace(" ", "")


@register.inclusion_tag("admin/access/open_auth_banner.html")
def open_auth_banner() -> dict[str, Any]:
    return {"open": auth_mode() == "open"}
