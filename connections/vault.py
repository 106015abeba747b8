"""The token vault: one user's tokens at one provider (``ConnectedToken``), sealed by ``cipher``.

- ``store``: after a connect flow, replacing what was there.
- ``access_token``: what a tool call asks. It reads a cache entry (the sealed row, or "none"), so
  a call does not touch the database; a miss reads the row once and fills the entry. Writes and
  revocations drop the entry (``CACHE_SECONDS`` bounds a stale one on a cache without shared
  invalidation).
- Refresh: an access token within ``REFRESH_MARGIN`` of its expiry is refreshed before use, one
  refresh in flight per token across workers: ``SELECT ... FOR UPDATE`` on its row. The database
  holds the record, so its row lock is the one lock every worker already shares, and it is
  released with the transaction whatever happens to the worker (a Redis lock would need a lease
  and a fencing check to be as safe). The second caller waits on the lock, then finds the row
  refreshed and uses it. (SQLite has no row locks: its single writer serializes the writes, and a
  rare double refresh is harmless for providers that do not rotate refresh tokens; production
  runs PostgreSQL.) A refresh the provider refuses deletes the row: the user is asked to connect
  again; one that could not be made leaves the row for the next call.
- ``invalidate``: a service answered 401 to a token: refreshed if it can be, else dropped.
- ``revoke``: by the user or staff; the provider's revocation URL is called when set.

Nothing here logs, returns or raises a token except ``access_token``'s return value.
"""

from __future__ import annotations

import base64
import json
import logging
import time
from datetime import UTC, datetime
from typing import Any

from asgiref.sync import sync_to_async
from django.core.cache import cache
from django.db import close_old_connections, transaction

from . import cipher, provider_client
from .models import ConnectedToken, Provider

logger = logging.getLogger(__name__)

REFRESH_MARGIN = 60.0  # s: refresh a token that expires sooner than this
CACHE_SECONDS = 300
NONE = "none"


def _key(user_id: int, provider_id: int) -> str:
    return f"connections:token:{user_id}:{provider_id}"


def _provider_key(slug: str) -> str:
    return f"connections:provider:{slug}"


def forget_provider(slug: str) -> None:
    cache.delete(_provider_key(slug))


def _entry(row: ConnectedToken | None) -> str:
    if row is None:
        return NONE
    return json.dumps({"sealed": base64.b64encode(bytes(row.sealed)).decode("ascii"),
                       "expires_at": row.expires_at.timestamp() if row.expires_at else None,
                       "refreshable": row.refreshable})


def _seal(tokens: provider_client.Tokens) -> bytes:
    return cipher.seal(json.dumps({"access_token": tokens.access_token,
                                   "refresh_token": tokens.refresh_token}).encode())


def _unsealed(sealed: bytes) -> dict[str, str]:
    found: dict[str, str] = json.loads(cipher.unseal(sealed))
    return found


def _when(epoch: float | None) -> datetime | None:
    return datetime.fromtimestamp(epoch, UTC) if epoch is not None else None


def store(user_id: int, provider: Provider, tokens: provider_client.Tokens) -> None:
    ConnectedToken.objects.update_or_create(
        user_id=user_id, provider=provider,
        defaults={"sealed": _seal(tokens), "scope": tokens.scope, "expires_at": _when(tokens.expires_at),
                  "refreshable": bool(tokens.refresh_token), "refreshed_at": None},
    )
    cache.delete(_key(user_id, provider.pk))


def _due(expires_at: float | None) -> bool:
    return expires_at is not None and expires_at - REFRESH_MARGIN <= time.time()


def provider_info(slug: str) -> dict[str, Any] | None:
    """``{"id", "name", "enabled", "kind"}`` of the provider ``slug`` (cached), None when there is none."""
    cached = cache.get(_provider_key(slug))
    if cached is not None:
        found: dict[str, Any] | None = json.loads(cached) or None
        return found
    close_old_connections()
    row = Provider.objects.filter(slug=slug).values("id", "name", "enabled", "kind").first()
    cache.set(_provider_key(slug), json.dumps(row or {}), CACHE_SECONDS)
    return dict(row) if row else None


def _access_token(user_id: int, provider_id: int) -> str | None:
    key = _key(user_id, provider_id)
    entry = cache.get(key)
    if entry is None:
        close_old_connections()
        entry = _entry(ConnectedToken.objects.filter(user_id=user_id, provider_id=provider_id).first())
        cache.set(key, entry, CACHE_SECONDS)
    if entry == NONE:
        return None
    record = json.loads(entry)
    expires = record["expires_at"]
    if _due(expires) and record["refreshable"]:
        return _refresh(user_id, provider_id)
    if expires is not None and expires <= time.time():
        return None  # expired and nothing to refresh it with: connect again
    return _unsealed(base64.b64decode(record["sealed"]))["access_token"]


def _locked_row(user_id: int, provider_id: int) -> ConnectedToken | None:
    """The user's row for the provider, locked until the transaction ends (``SELECT … FOR UPDATE``
    on PostgreSQL): one refresh in flight per token across workers."""
    row: ConnectedToken | None = (ConnectedToken.objects.select_for_update().select_related("provider")
                                  .filter(user_id=user_id, provider_id=provider_id).first())
    return row


def _store_refreshed(row: ConnectedToken, tokens: provider_client.Tokens) -> None:
    """Keep what a refresh answered: the new token sealed, its expiry, whether it can be refreshed
    again, and the scope when the provider said it (RFC 6749 §5.1: omitted means unchanged)."""
    row.sealed, row.expires_at = _seal(tokens), _when(tokens.expires_at)
    row.refreshable, row.refreshed_at = bool(tokens.refresh_token), datetime.now(UTC)
    if tokens.scope:
        row.scope = tokens.scope
    row.save(update_fields=["sealed", "expires_at", "refreshable", "refreshed_at", "scope"])


def _refresh(user_id: int, provider_id: int) -> str | None:
    close_old_connections()
    try:
        with transaction.atomic():
            row = _locked_row(user_id, provider_id)
            if row is None:
                return None
            held = _unsealed(row.sealed)
            expires = row.expires_at.timestamp() if row.expires_at else None
            if not _due(expires):  # another worker refreshed it while this one waited for the lock
                return held["access_token"]
            try:
                tokens = provider_client.refresh(row.provider, held["refresh_token"])
            except provider_client.ProviderError as exc:
                logger.warning("refreshing a token for user %s at %s failed: %s",
                               user_id, row.provider.slug, exc)
                if exc.refused:
                    row.delete()
                return None
            _store_refreshed(row, tokens)
            return tokens.access_token
    finally:
        cache.delete(_key(user_id, provider_id))
        close_old_connections()


def _invalidate(user_id: int, provider_id: int, refused: str) -> None:
    """The service answered 401 to ``refused`` (RFC 6750 §3.1 ``invalid_token``): refresh the
    token when the row can be, else delete the row, so the next ``access_token`` is a new token or
    None (the user is asked to connect again). Under the row's lock, as ``_refresh``: a row whose
    token is no longer ``refused`` (another worker refreshed it, the user reconnected) is left."""
    close_old_connections()
    try:
        with transaction.atomic():
            row = _locked_row(user_id, provider_id)
            if row is None:
                return
            try:
                held = _unsealed(row.sealed)
            except cipher.VaultLocked:
                return  # nothing to compare with: the next read says the vault is locked
            if held.get("access_token") != refused:
                return
            if row.refreshable and held.get("refresh_token"):
                try:
                    tokens = provider_client.refresh(row.provider, held["refresh_token"])
                except provider_client.ProviderError as exc:
                    logger.warning("refreshing a refused token for user %s at %s failed: %s",
                                   user_id, row.provider.slug, exc)
                else:
                    _store_refreshed(row, tokens)
                    return
            logger.info("a token of user %s at %s was refused by the service: connect again",
                        user_id, row.provider.slug)
            row.delete()
    finally:
        cache.delete(_key(user_id, provider_id))
        close_old_connections()


access_token = sync_to_async(_access_token)
invalidate = sync_to_async(_invalidate)
provider_info_async = sync_to_async(provider_info)


def revoke(row: ConnectedToken) -> None:
    """Remove ``row`` and tell the provider (RFC 7009; the refresh token first: revoking it ends
    the grant's access tokens too at most providers)."""
    try:
        held = _unsealed(row.sealed)
    except cipher.VaultLocked:
        held = {}
    row.delete()
    cache.delete(_key(row.user_id, row.provider_id))
    if held.get("refresh_token"):
        provider_client.revoke(row.provider, held["refresh_token"], "refresh_token")
    if held.get("access_token"):
        provider_client.revoke(row.provider, held["access_token"], "access_token")


def reseal_all() -> int:
    """Every row encrypted again with the first key (``manage.py rotate_vault_keys``)."""
    count = 0
    for row in ConnectedToken.objects.all().iterator():
        ConnectedToken.objects.filter(pk=row.pk).update(sealed=cipher.reseal(row.sealed))
        count += 1
    return count
