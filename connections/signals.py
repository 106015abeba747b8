"""A provider saved or deleted: the cached view of it (``vault.provider_info``) is dropped, so a
disabled provider stops serving calls on every worker sharing the cache."""

from __future__ import annotations

from typing import Any

from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from .models import Provider
from .vault import forget_provider


@receiver(post_save, sender=Provider)
@receiver(post_delete, sender=Provider)
def provider_changed(sender: type[Provider], instance: Provider, **kwargs: Any) -> None:
    forget_provider(instance.slug)
