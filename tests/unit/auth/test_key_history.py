"""API keys and their scopes keep every version, with the admin user who made it; never the
key's digest."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from access.models import ApiKey
from tests.support.admin_client import form_fields

pytestmark = pytest.mark.django_db


def test_a_scope_change_in_the_admin_is_a_version_by_its_user(admin_client: Client, admin_user: User) -> None:
    key, _ = ApiKey.issue("ci", tags=["internal"])
    url = reverse("admin:access_apikey_change", args=[key.pk])
    page = admin_client.get(url)
    data: dict[str, list[str]] = {}
    for name, value in form_fields(page.content.decode()):
        data.setdefault(name, []).append(value)
    data["tags"] = ['["internal", "public"]']
    data["_save"] = ["Save"]
    saved = admin_client.post(url, data)
    assert saved.status_code == 302, saved.content.decode()[:2000]
    latest, first = key.history.all()[:2]
    assert (first.tags, latest.tags) == (["internal"], ["internal", "public"])
    assert latest.history_user == admin_user and first.history_user is None
    assert not hasattr(latest, "digest")  # the secret's digest is not copied into the history
