"""An attacker against the upstreams' new routes (issue 40 item 5): the REST API's and the admin's
``sync`` / ``test`` / ``review`` actions.

- SSRF through "Test connection": a row saved around validation (a script, an old row, a setting
  tightened since) with a private address or a host not allowed is still refused when connecting,
  and the refusal is the answer (200, ``ok: false``), not a request sent.
- A secret in a body is refused without being stored or echoed back.
- The actions are POSTs behind CSRF for a browser session (the admin's and the API's session auth).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.contrib.auth.models import User
from django.test import Client, override_settings
from django.urls import reverse
from rest_framework.test import APIClient

from registry.models import Upstream
from tests.support.upstream import Upstream as PlainHttp

pytestmark = pytest.mark.django_db


@pytest.fixture
def root() -> User:
    return User.objects.create_superuser("root", "root@example.com", "pw")


@pytest.fixture
def listener() -> Iterator[PlainHttp]:
    with PlainHttp() as server:
        yield server


@override_settings(REGISTRY_HTTP_ALLOWED_HOSTS=["mcp.vendor.example"], REGISTRY_HTTP_FORBID_PRIVATE=True)
def test_test_connection_refuses_what_the_outbound_rules_refuse_even_for_a_stored_row(
    root: User, listener: PlainHttp
) -> None:
    # Saved around Upstream.clean (update(), as an old row or a tightened setting leaves it).
    row = Upstream.objects.create(
        name="x", prefix="x", url="https://mcp.vendor.example/mcp", connect_timeout=1
    )
    client = APIClient()
    client.force_login(root)
    for url in (f"{listener.url}/mcp", "http://169.254.169.254/latest/meta-data", "https://evil.example/mcp"):
        Upstream.objects.filter(pk=row.pk).update(url=url)
        answer = client.post(f"/api/v1/upstreams/{row.pk}/test")
        assert answer.status_code == 200 and answer.json()["ok"] is False, (url, answer.json())
        synced = client.post(f"/api/v1/upstreams/{row.pk}/sync")
        assert synced.status_code == 200 and synced.json()["error"], url
    assert listener.requests == []  # nothing reached the loopback listener


def test_a_secret_in_the_body_is_never_stored_or_echoed(root: User) -> None:
    client = APIClient()
    client.force_login(root)
    secret = "sk-live-DO-NOT-STORE"
    for auth in (
        {"kind": "header", "env": secret},
        {"kind": "header", "env": "MCP_TOOL_SECRET_X", "token": secret},
        {"kind": "client_credentials", "client_secret": secret},
    ):
        answer = client.post(
            "/api/v1/upstreams/",
            {"name": "x", "prefix": "x", "url": "https://a.example/", "auth": auth, "enabled": False},
            format="json",
        )
        assert answer.status_code == 400 and secret not in answer.content.decode()
    assert not Upstream.objects.exists()


def test_the_actions_need_a_csrf_token_with_a_session(root: User) -> None:
    row = Upstream.objects.create(name="x", prefix="x", url="https://a.example/mcp", enabled=False)
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(root)
    for name in ("test", "sync", "review"):
        answer = browser.post(
            reverse(f"admin:registry_upstream_{name}", args=[row.pk]), {"decision": "approve"}
        )
        assert answer.status_code == 403, name
    api = APIClient(enforce_csrf_checks=True)
    api.force_login(root)
    for action in ("test", "sync", "sync/approve"):
        assert api.post(f"/api/v1/upstreams/{row.pk}/{action}").status_code == 403, action
    assert api.get(f"/api/v1/upstreams/{row.pk}/").status_code == 200  # reading needs none
