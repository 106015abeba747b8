"""The API key pages of the admin: filtered by status; a key's Revoke button and its confirmation;
the banner while ``MCP_AUTH=open`` says keys are not enforced (and is gone with ``keys``). The
secret page in a real browser: tests/integration/test_secret_page_browser.py."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from access.models import ApiKey

pytestmark = pytest.mark.django_db
CHANGELIST = reverse("admin:access_apikey_changelist")


@pytest.fixture
def admin(client: Client) -> Client:
    client.force_login(get_user_model().objects.create_superuser("root", "root@example.com", "pw"))
    return client


@pytest.fixture
def keys() -> dict[str, ApiKey]:
    active, _ = ApiKey.issue("live-key")
    expired, _ = ApiKey.issue("old-key", expires_at=timezone.now() - timedelta(hours=1))
    revoked, _ = ApiKey.issue("gone-key")
    revoked.revoke()
    return {"active": active, "expired": expired, "revoked": revoked}


def listed(admin: Client, query: str = "") -> set[str]:
    page = admin.get(f"{CHANGELIST}{query}").content.decode()
    return {name for name in ("live-key", "old-key", "gone-key") if f">{name}<" in page}


def test_the_key_list_filters_by_status(admin: Client, keys: dict[str, ApiKey]) -> None:
    assert listed(admin) == {"live-key", "old-key", "gone-key"}
    assert listed(admin, "?status=active") == {"live-key"}
    assert listed(admin, "?status=expired") == {"old-key"}
    assert listed(admin, "?status=revoked") == {"gone-key"}
    page = admin.get(CHANGELIST).content.decode()
    for status in ("active", "expired", "revoked"):  # offered in the filter sidebar
        assert f'href="?status={status}"' in page


def test_a_keys_revoke_button_asks_then_revokes(admin: Client, keys: dict[str, ApiKey]) -> None:
    key = keys["active"]
    revoke_url = reverse("admin:access_apikey_revoke", args=[key.pk])
    change = admin.get(reverse("admin:access_apikey_change", args=[key.pk])).content.decode()
    assert f'href="{revoke_url}"' in change
    asked = admin.get(revoke_url)
    assert asked.status_code == 200 and "Yes, revoke it" in asked.content.decode()
    key.refresh_from_db()
    assert key.status == "active"  # a GET revokes nothing
    done = admin.post(revoke_url, follow=True)
    key.refresh_from_db()
    assert key.status == "revoked" and "is revoked" in done.content.decode()
    again = admin.get(reverse("admin:access_apikey_change", args=[key.pk])).content.decode()
    assert f'href="{revoke_url}"' not in again  # no button on a revoked key


def test_revoking_needs_the_change_permission(client: Client, keys: dict[str, ApiKey]) -> None:
    viewer = get_user_model().objects.create_user("viewer", password="pw", is_staff=True)
    client.force_login(viewer)
    response = client.post(reverse("admin:access_apikey_revoke", args=[keys["active"].pk]))
    assert response.status_code == 403
    keys["active"].refresh_from_db()
    assert keys["active"].status == "active"


def test_an_unknown_key_to_revoke_is_a_404(admin: Client) -> None:
    assert admin.get(reverse("admin:access_apikey_revoke", args=["12345"])).status_code == 404
    assert admin.get(reverse("admin:access_apikey_revoke", args=["abc"])).status_code == 404


def test_with_open_auth_the_key_pages_say_keys_are_not_enforced(
    admin: Client, keys: dict[str, ApiKey], settings: Any
) -> None:
    settings.MCP = {**settings.MCP, "ACCESS": {**settings.MCP.get("ACCESS", {}), "MODE": "open"}}
    for url in (
        CHANGELIST,
        reverse("admin:access_apikey_change", args=[keys["active"].pk]),
        reverse("admin:access_apikey_add"),
    ):
        page = admin.get(url).content.decode()
        assert 'id="open-auth-banner"' in page and "not enforced" in page, url


def test_with_keys_required_there_is_no_banner(admin: Client, keys: dict[str, ApiKey], settings: Any) -> None:
    settings.MCP = {**settings.MCP, "ACCESS": {**settings.MCP.get("ACCESS", {}), "MODE": "keys"}}
    assert 'id="open-auth-banner"' not in admin.get(CHANGELIST).content.decode()


def test_a_new_management_tokens_page_has_the_copy_button_and_leaves_for_the_tokens_page(
    admin: Client,
) -> None:
    from management_api.tokens import ManagementToken

    root = get_user_model().objects.get(username="root")
    page = admin.post(reverse("admin:management_api_managementtoken_add"), {"user": root.pk, "name": "CI"})
    token = ManagementToken.objects.get(name="CI")
    body = page.content.decode()
    assert 'id="copy-secret"' in body and "access/secret-once.js" in body
    after = reverse("admin:management_api_managementtoken_change", args=[token.pk])
    assert f'data-after-url="{after}"' in body
    assert admin.get(after).status_code == 200  # where a reload lands: the token, read-only


def test_the_open_mode_banner_is_on_every_admin_page(admin: Client, settings: Any) -> None:
    settings.MCP = {**settings.MCP, "ACCESS": {**settings.MCP.get("ACCESS", {}), "MODE": "open"}}
    for url in (reverse("admin:index"), reverse("admin:registry_tool_changelist")):
        page = admin.get(url).content.decode()
        assert 'id="open-auth-banner"' in page and "not enforced" in page, url
