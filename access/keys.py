"""``DatabaseKeySource``: the key ring's ``KeySource`` (``mcp_protocol/auth/keys.py``) on the
``ApiKey`` table. Both calls run in a worker thread, off the event loop, and only when the ring
reloads (a change, a resync), polls ``version`` (every second: one aggregate) or flushes "last
used" (every few seconds)."""

from __future__ import annotations

from datetime import UTC, datetime

from asgiref.sync import sync_to_async
from django.db import close_old_connections, transaction
from django.db.models import Count, Max

from mcp_protocol.auth.keys import KeyRecord, KeySource

from .models import ApiKey


def _load() -> list[KeyRecord]:
    close_old_connections()
    try:
        return [key.record() for key in ApiKey.objects.filter(revoked_at__isnull=True)]
    finally:
        close_old_connections()


def _touch(last_used: dict[int, float]) -> None:
    close_old_connections()
    try:
        with transaction.atomic():
            for key_id, when in last_used.items():
                ApiKey.objects.filter(pk=key_id).update(last_used_at=datetime.fromtimestamp(when, UTC))
    finally:
        close_old_connections()


def _version() -> str:
    close_old_connections()
    try:
        row = ApiKey.objects.aggregate(changed=Max("updated_at"), count=Count("id"))
        return f"{row['changed']}/{row['count']}"
    finally:
        close_old_connections()


class DatabaseKeySource(KeySource):
    async def version(self) -> str:
        return await sync_to_async(_version, thread_sensitive=False)()

    async def load(self) -> list[KeyRecord]:
        return await sync_to_async(_load, thread_sensitive=False)()

    async def touch(self, last_used: dict[int, float]) -> None:
        await sync_to_async(_touch, thread_sensitive=False)(last_used)
