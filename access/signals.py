"""Every committed change to an API key is published on the bus channel ``access``, so every
worker's key ring reloads (a revoked key stops working everywhere within the second) and the
key's sessions learn of a changed scope (``list_changed``)."""

from __future__ import annotations

import logging
import uuid
from typing import Any

from django.db import transaction
from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from mcp_protocol.auth.keys import ACCESS_CHANNEL

from .models import ApiKey

logger = logging.getLogger(__name__)


def publish(key_ids: list[int]) -> None:
    """Never raises: the change is committed, and a bus outage must not turn it into an error
    (workers also reload every minute and after a bus outage)."""
    from mcp_django.conf import mcp_settings

    message = {"id": uuid.uuid4().hex, "keys": key_ids}
    try:
        mcp_settings.backend("BUS").publish_sync(ACCESS_CHANNEL, message)
    except Exception:
        logger.exception("could not publish an API key change on the bus")


@receiver(post_save, sender=ApiKey, dispatch_uid="access-key-saved")
@receiver(post_delete, sender=ApiKey, dispatch_uid="access-key-deleted")
def key_changed(sender: Any, instance: ApiKey, **kwargs: Any) -> None:
    if kwargs.get("update_fields") == frozenset({"last_used_at"}):
        return
    key_id = instance.pk
    transaction.on_commit(lambda: publish([key_id]))
