"""System checks of the registry app: what a project taking it in must also have."""

from __future__ import annotations

from typing import Any

from django.apps import apps
from django.core.checks import CheckMessage, Error, register


@register()
def check_installed_together(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """The registry serves through ``mcp_protocol``: without that app its system checks, its
    ``mcp_stdio`` command and the endpoint's settings checks are missing."""
    if apps.is_installed("mcp_protocol"):
        return []
    return [Error("'registry' is in INSTALLED_APPS but 'mcp_protocol' is not",
                  hint="Add 'mcp_protocol' to INSTALLED_APPS (before 'registry').", id="registry.E001")]
