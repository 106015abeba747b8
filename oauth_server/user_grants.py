"""Every grant of a user ends when the user can no longer be trusted with it: when the account is
deactivated (``is_active`` set to False) or its password changes (issue 37 item 3).

Ending a grant means, at once and for every client: the authorization codes not yet exchanged are
deleted, the refresh tokens are revoked (marked, so a later use is ``invalid_grant``), the access
tokens' rows are deleted, and a watermark per client is written for ``/mcp`` (``revocations``),
where access tokens are JWTs checked without the database: they are refused there within the
workers' one-second poll although their signature and ``exp`` are still good.

The trigger is a ``pre_save``/``post_save`` pair on the user model: ``pre_save`` reads the row as
stored (only when the save may touch ``is_active`` or ``password``: a sign-in's ``last_login``
update costs nothing), ``post_save`` ends the grants once the transaction commits, so a rolled
back deactivation ends nothing. A bulk ``QuerySet.update`` sends no signal: call ``end_grants``.

The validator refuses code exchange and refresh for an inactive user as well (``validator.py``):
a deactivation through ``update()`` still ends every refresh.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models.signals import post_save, pre_save
from django.utils import timezone
from oauth2_provider.models import get_access_token_model, get_grant_model, get_refresh_token_model

from .models import record
from .revocations import revoke

_WATCHED = frozenset({"is_active", "password"})


def end_grants(user: Any, reason: str) -> None:
    """End every code, refresh token and access token of ``user``, for every client."""
    clients: set[str] = set()
    with transaction.atomic():
        for model in (get_grant_model(), get_refresh_token_model(), get_access_token_model()):
            rows = model.objects.filter(user=user).select_related("application")
            clients.update(r.application.client_id for r in rows if r.application is not None)
        get_grant_model().objects.filter(user=user).delete()
        get_refresh_token_model().objects.filter(user=user, revoked__isnull=True).update(
            revoked=timezone.now(), access_token=None
        )
        get_access_token_model().objects.filter(user=user).delete()
    for client_id in sorted(clients):
        revoke(user, client_id)  # its JWTs on /mcp
    if clients:
        record("client_revoked", user=user, client_id="*", detail=f"every client: {reason}")


def _rehash(instance: Any, update_fields: Any) -> bool:
    """Django re-hashing the same password at sign-in (a stronger hasher or more iterations:
    ``AbstractBaseUser.check_password``'s setter) saves ``password`` alone with no raw password
    pending; that is no password change and ends nothing."""
    return update_fields is not None and set(update_fields) == {"password"} and (
        getattr(instance, "_password", None) is None
    )


def _remember_stored(sender: Any, instance: Any, update_fields: Any = None, **kwargs: Any) -> None:
    instance._mcp_stored = None
    if instance.pk is None or (update_fields is not None and not _WATCHED & set(update_fields)):
        return
    if _rehash(instance, update_fields):
        return
    instance._mcp_stored = sender.objects.filter(pk=instance.pk).values("is_active", "password").first()


def _end_grants_if_trust_ended(sender: Any, instance: Any, created: bool = False, **kwargs: Any) -> None:
    stored = getattr(instance, "_mcp_stored", None)
    instance._mcp_stored = None
    if created or stored is None:
        return
    if stored["is_active"] and not instance.is_active:
        reason = "deactivated"
    elif stored["password"] != instance.password:
        reason = "password changed"
    else:
        return
    transaction.on_commit(lambda: end_grants(instance, reason))


def connect() -> None:
    """Called by the app's ``ready``: the user model is known then."""
    user_model = get_user_model()
    pre_save.connect(_remember_stored, sender=user_model, dispatch_uid="oauth_server.user_grants.pre")
    post_save.connect(
        _end_grants_if_trust_ended, sender=user_model, dispatch_uid="oauth_server.user_grants.post"
    )
