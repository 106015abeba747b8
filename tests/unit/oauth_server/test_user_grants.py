"""A user's grants end when the account is deactivated or its password changes, and only then
(oauth_server/user_grants.py, issue 37 item 3); the end-to-end case through a real server and /mcp
is tests/integration/test_oauth_server_trust.py."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.hashers import make_password
from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone
from oauth2_provider.models import AccessToken, Application, Grant, RefreshToken

from oauth_server.models import Revocation

pytestmark = pytest.mark.django_db


def granted(name: str) -> User:
    """A user holding a code, an access token and a refresh token of one client."""
    user = User.objects.create_user(name, password="first-password-1")
    app = Application.objects.create(
        client_id=f"client-{name}",
        client_type=Application.CLIENT_PUBLIC,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris="http://127.0.0.1:9/cb",
    )
    later = timezone.now() + timedelta(minutes=5)
    Grant.objects.create(
        user=user, application=app, code=f"code-{name}", expires=later, redirect_uri="http://127.0.0.1:9/cb"
    )
    access = AccessToken.objects.create(user=user, application=app, token=f"at-{name}", expires=later)
    RefreshToken.objects.create(user=user, application=app, token=f"rt-{name}", access_token=access)
    return user


def live_grants(user: User) -> int:
    return (
        Grant.objects.filter(user=user).count()
        + AccessToken.objects.filter(user=user).count()
        + RefreshToken.objects.filter(user=user, revoked__isnull=True).count()
    )


def test_deactivating_a_user_ends_their_codes_and_tokens_and_revokes_on_mcp(
    django_capture_on_commit_callbacks: Any,
) -> None:
    user = granted("dora")
    with django_capture_on_commit_callbacks(execute=True):
        user.is_active = False
        user.save()
    assert live_grants(user) == 0
    assert Revocation.objects.filter(subject=str(user.pk), client_id="client-dora").exists()


def test_a_password_change_ends_every_grant(django_capture_on_commit_callbacks: Any) -> None:
    user = granted("pete")
    with django_capture_on_commit_callbacks(execute=True):
        user.set_password("second-password-2")
        user.save()
    assert live_grants(user) == 0


def test_a_sign_in_or_a_rehash_of_the_same_password_ends_nothing(
    django_capture_on_commit_callbacks: Any,
) -> None:
    user = granted("rita")
    with django_capture_on_commit_callbacks(execute=True):
        user.last_login = timezone.now()
        user.save(update_fields=["last_login"])
        # A hash of an older hasher: the right password re-hashes it and saves it (Django's
        # check_password setter, "hash upgrades shouldn't be considered password changes").
        older = make_password("first-password-1", hasher="pbkdf2_sha1")
        User.objects.filter(pk=user.pk).update(password=older)
        user.refresh_from_db()
        before = user.password
        assert user.check_password("first-password-1")
        assert User.objects.get(pk=user.pk).password != before  # re-hashed and saved
        user.first_name = "Rita"
        user.save()
    assert live_grants(user) == 3


def test_a_deactivation_rolled_back_ends_nothing(django_capture_on_commit_callbacks: Any) -> None:
    user = granted("sam")
    with django_capture_on_commit_callbacks(execute=True), pytest.raises(RuntimeError):
        with transaction.atomic():
            user.is_active = False
            user.save()
            raise RuntimeError("rolled back")
    assert live_grants(user) == 3
