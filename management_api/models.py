"""The models of the management API: its bearer tokens (``tokens.py``) and ``LiveSession``, which
carries the permissions of its sessions endpoint."""

from __future__ import annotations

from django.db import models

from .tokens import ManagementToken

__all__ = ["LiveSession", "LiveTask", "ManagementToken"]


class LiveSession(models.Model):
    """No table: live MCP sessions are in the session store (``mcp_protocol.stores``). This model
    only carries the permissions of the management API's sessions endpoint, so they can be granted
    in the admin like any other."""

    class Meta:
        managed = False
        default_permissions = ()
        permissions = [
            ("view_livesession", "Can view live MCP sessions"),
            ("delete_livesession", "Can end live MCP sessions"),
        ]


class LiveTask(models.Model):
    """No table: tasks are in the task store (``mcp_protocol.stores.tasks``). This model only
    carries the permissions of the tasks endpoint and the admin's tasks page."""

    class Meta:
        managed = False
        default_permissions = ()
        permissions = [
            ("view_livetask", "Can view MCP tasks"),
            ("cancel_livetask", "Can cancel MCP tasks"),
        ]
