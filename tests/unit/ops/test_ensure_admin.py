"""``manage.py ensure_admin`` (compose's one-shot admin): from the environment, once, never a reset."""

from __future__ import annotations

from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

pytestmark = pytest.mark.django_db


def run() -> str:
    out = StringIO()
    call_command("ensure_admin", stdout=out)
    return out.getvalue()


def test_nothing_happens_without_a_username(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DJANGO_SUPERUSER_USERNAME", raising=False)
    assert "no admin created" in run()
    assert not get_user_model().objects.exists()


def test_the_admin_is_created_once_and_never_reset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DJANGO_SUPERUSER_USERNAME", "ops")
    monkeypatch.setenv("DJANGO_SUPERUSER_PASSWORD", "first-Secret-9")
    first = run()
    assert first == "Admin 'ops' created.\n" and "first-Secret-9" not in first
    user = get_user_model().objects.get(username="ops")
    assert user.is_superuser and user.is_staff and user.check_password("first-Secret-9")
    monkeypatch.setenv("DJANGO_SUPERUSER_PASSWORD", "second-Secret-9")
    assert "left unchanged" in run()
    assert get_user_model().objects.get(username="ops").check_password("first-Secret-9")


def test_a_username_without_a_password_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DJANGO_SUPERUSER_USERNAME", "ops")
    monkeypatch.setenv("DJANGO_SUPERUSER_PASSWORD", "")
    with pytest.raises(CommandError):
        run()
