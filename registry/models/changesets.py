"""``ChangeSet``: one committed change to the registry, whatever wrote it, as one row.

A transaction that changes registry rows opens one change set at its first change (``changes/publish.py``):
one admin save, one API request, one import is one change set, and a row saved from a shell
outside a transaction is one of its own. The row says who (``actor``: ``user:<name>``,
``token:<name>`` or ``system``), from where (``source``), when, and what changed for the clients
(``kinds``: the lists; ``uris``: the resources), so a worker that missed the bus message can still
serve the change and notify its clients (``changes/reconcile.py``, which reads ids by primary key
only), and the history of every definition can group its versions by it. Its ``uid`` names its bus
messages across databases.
"""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.utils import timezone


class ChangeSet(models.Model):
    class Source(models.TextChoices):
        ADMIN = "admin", "admin"
        API = "api", "REST API"
        IMPORT = "import", "import"
        COMMAND = "command", "management command"
        SHELL = "shell", "shell"
        SYSTEM = "system", "system"

    id = models.BigAutoField(primary_key=True)
    # What the change set's bus messages and fan-out claims are named by (``cs<uid>.<kind>``), not
    # its id: ids start again on a fresh or restored database while Redis keeps the claims of the
    # old ones for an hour, and every worker would take the new change for one already written
    # (issue 38 item 6). Drawn when the row is made, so it never repeats whatever the database's
    # history; a restored row keeps its own, so republishing it is still claimed once.
    uid = models.UUIDField(default=uuid.uuid4, editable=False)
    # Set by the writer's clock when the change set opens (before its transaction commits): the
    # reconciler lets a change set settle for ``reconcile.SETTLE`` seconds before it stops looking
    # for change sets with lower ids that commit later.
    created_at = models.DateTimeField(default=timezone.now, editable=False, db_index=True)
    source = models.CharField(max_length=16, choices=Source.choices, default=Source.SHELL)
    actor = models.CharField(
        max_length=200, default="system", help_text="user:<name>, token:<name> or system"
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    note = models.CharField(max_length=255, blank=True, help_text="e.g. revert of change set 12")
    kinds = models.JSONField(default=list, help_text="The lists that changed: tools, resources, prompts.")
    uris = models.JSONField(default=list, help_text="The resources that changed.")

    class Meta:
        ordering = ["-id"]
        verbose_name = "change set"

    def __str__(self) -> str:
        return f"#{self.pk} {self.source} by {self.actor}"
