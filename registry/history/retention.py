"""How long the registry's history is kept: ``prune_history`` deletes versions and change sets
older than ``REGISTRY_HISTORY_RETENTION_DAYS`` (run it daily, like ``prune_audit``).

Never the latest version of a live row (a definition, one of a prompt's arguments and
messages, or a skill's file): what a row is now stays known, so it can still be diffed and its
next change reverted. A deleted row's versions go once they are old, its deletion included. A
change set goes once it is old and no version left names it.
"""

from __future__ import annotations

import datetime

from django.conf import settings
from django.db import models, transaction
from django.utils import timezone

from ..models import (
    Prompt,
    PromptArgument,
    PromptMessage,
    Resource,
    ResourceTemplate,
    Skill,
    SkillFile,
    Tool,
    VirtualServer,
)
from ..models.changesets import ChangeSet

RETENTION_DAYS = 365  # setting REGISTRY_HISTORY_RETENTION_DAYS
# Every model with a history: a change set named by a version of any of them is kept (and could
# not be deleted: the versions' foreign key protects it).
RECORDED = (
    Tool, Resource, ResourceTemplate, Prompt, PromptArgument, PromptMessage, Skill, SkillFile, VirtualServer
)


def retention_days() -> int:
    return int(getattr(settings, "REGISTRY_HISTORY_RETENTION_DAYS", RETENTION_DAYS))


def prune(days: int | None = None, *, dry_run: bool = False) -> dict[str, int]:
    """Delete what is older than ``days`` (default: the setting); returns the count per table."""
    days = retention_days() if days is None else days
    if days < 1:
        raise ValueError("Keep at least 1 day of history.")
    cutoff = timezone.now() - datetime.timedelta(days=days)
    counts: dict[str, int] = {}
    with transaction.atomic():
        for model in RECORDED:
            historical = model.history.model  # type: ignore[attr-defined]
            latest_of_live = (
                historical.objects.filter(id__in=model._default_manager.values("pk"))
                .order_by()
                .values("id")
                .annotate(latest=models.Max("history_id"))
                .values("latest")
            )
            old = historical.objects.filter(history_date__lt=cutoff).exclude(history_id__in=latest_of_live)
            counts[historical._meta.model_name] = old.count() if dry_run else old.delete()[0]
        unused = ChangeSet.objects.filter(created_at__lt=cutoff)
        for model in RECORDED:
            named = model.history.model.objects.filter(changeset__isnull=False).values("changeset_id")  # type: ignore[attr-defined]
            unused = unused.exclude(pk__in=named)
        counts["changeset"] = unused.count() if dry_run else unused.delete()[0]
    return counts
