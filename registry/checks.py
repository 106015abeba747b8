"""System checks of the registry app: what a project taking it in must also have."""

from __future__ import annotations

from typing import Any

from django.apps import apps
from django.core.checks import CheckMessage, Error, Tags, register


@register()
def check_installed_together(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """The registry serves through ``mcp_django`` (the MCP app): without it its system checks,
    its ``mcp_stdio`` command and the endpoint's settings checks are missing."""
    if apps.is_installed("mcp_django"):
        return []
    return [
        Error(
            "'registry' is in INSTALLED_APPS but 'mcp_django' is not",
            hint="Add 'mcp_django' to INSTALLED_APPS (before 'registry').",
            id="registry.E001",
        )
    ]


@register(Tags.database)
def check_code_names(app_configs: Any = None, databases: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """A definition in code and an enabled row with the same name (or URI): the row is not served.
    A database check (``migrate``, ``check --database default``): it reads the rows."""
    if not databases:
        return []
    from django.db import DatabaseError

    from .code import definitions as code
    from .models import Prompt, Resource, ResourceTemplate, Tool

    messages: list[CheckMessage] = []
    for model in (Tool, Resource, ResourceTemplate, Prompt):
        field, table = model.code_key
        names = list(code.TABLES[table])
        if not names:
            continue
        try:
            clashing = list(
                model.objects.filter(enabled=True, **{f"{field}__in": names}).values_list("pk", field)
            )
        except DatabaseError:  # not migrated yet: nothing stored can clash
            return []
        for pk, key in clashing:
            owner = code.code_owner(table, key)
            messages.append(
                Error(
                    f"{model._meta.verbose_name} {key!r} is defined both in code ({owner}) "
                    f"and in the database (row {pk}); only the code one is served",
                    hint="Rename or disable the row in the admin, or rename the code definition.",
                    obj=model,
                    id="registry.E002",
                )
            )
    return messages


@register()
def check_http_settings(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """The http tool kind's pool, retry and guard settings (``kinds/http_client/config.py``) are usable."""
    from .kinds.http_client import config

    return [Error(problem, hint="Fix the setting or its REGISTRY_HTTP_* environment variable.",
                  id="registry.E003") for problem in config.problems()]


@register()
def check_approval_settings(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """``MCP_APPROVAL_DESTRUCTIVE_DEFAULT`` names a policy (``mcp_protocol/approvals.py``): a typo
    must stop start-up, not leave destructive tools unguarded."""
    from django.conf import settings

    from mcp_protocol.approvals import POLICIES

    value = getattr(settings, "MCP_APPROVAL_DESTRUCTIVE_DEFAULT", "none")
    if value in POLICIES:
        return []
    return [Error(f"MCP_APPROVAL_DESTRUCTIVE_DEFAULT is {value!r}, not one of {', '.join(POLICIES)}",
                  hint="Set it to none, confirm or staff.", id="registry.E010")]
