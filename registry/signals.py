"""Wires model saves and deletes to ``changes.note_change`` (published after commit).

Inline children (prompt arguments and messages) publish their prompt's kind. A resource whose URI
changes reports both the old and the new URI, so subscribers of either hear about it.
"""

from __future__ import annotations

from typing import Any

from django.db.models.signals import post_delete, post_save, pre_save
from django.dispatch import receiver

from . import changes
from .models import Prompt, PromptArgument, PromptMessage, Resource, ResourceTemplate, Tool

MODELS = (Tool, Resource, ResourceTemplate, Prompt, PromptArgument, PromptMessage)


@receiver(pre_save, sender=Resource)
def remember_old_uri(sender: type[Resource], instance: Resource, raw: bool = False, **kwargs: Any) -> None:
    if instance.pk and not raw:
        instance._old_uri = sender.objects.filter(pk=instance.pk).values_list("uri", flat=True).first()


def _changed(sender: Any, instance: Any, using: str, **kwargs: Any) -> None:
    uris: list[str] = []
    if isinstance(instance, Resource):
        uris = [instance.uri]
        old = instance.__dict__.pop("_old_uri", None)
        if old and old != instance.uri:
            uris.append(old)
    changes.note_change(sender.mcp_kind, uris, using=using)


for _model in MODELS:
    post_save.connect(_changed, sender=_model, dispatch_uid=f"registry-changed-save-{_model.__name__}")
    post_delete.connect(_changed, sender=_model, dispatch_uid=f"registry-changed-delete-{_model.__name__}")
