"""An upstream called as the user in ``/api/v1/upstreams/`` and the registry document (issue 42
item 3): ``auth`` ``{"kind": "user", "connection", "listing"}`` round-trips; the provider must
exist; a token in the body is a 400; the document holds the provider's slug, never a token."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import override_settings
from rest_framework.test import APIClient

from connections.models import Provider
from registry.models import Upstream
from registry.transfer.documents import export_document

pytestmark = pytest.mark.django_db

BODY: dict[str, Any] = {
    "name": "calendar",
    "prefix": "cal",
    "url": "https://mcp.vendor.example/mcp",
    "auth": {"kind": "user", "connection": "tp",
             "listing": {"kind": "header", "header": "X-Listing-Key", "env": "MCP_TOOL_SECRET_LISTING"}},
}


@pytest.fixture(autouse=True)
def setup() -> Any:
    Provider.objects.create(slug="tp", name="Third Party", authorization_url="https://tp.example/authorize",
                            token_url="https://tp.example/token", client_id="c")
    with override_settings(REGISTRY_HTTP_ALLOWED_HOSTS=["mcp.vendor.example", "tp.example"]):
        yield


def test_user_auth_round_trips_with_its_listing_credential(api: APIClient) -> None:
    created = api.post("/api/v1/upstreams/", BODY, format="json")
    assert created.status_code == 201, created.json()
    assert created.json()["auth"] == BODY["auth"]
    row = Upstream.objects.get(name="calendar")
    assert (row.auth, row.connection, row.sync_auth, row.auth_header, row.auth_secret_env) == (
        "user", "tp", "header", "X-Listing-Key", "MCP_TOOL_SECRET_LISTING")
    # Back to a static credential: the provider and listing columns are cleared.
    changed = api.patch(f"/api/v1/upstreams/{row.pk}/", {"auth": {"kind": "none"}}, format="json",
                        HTTP_IF_MATCH='"1"')
    assert changed.status_code == 200, changed.json()
    row.refresh_from_db()
    assert (row.auth, row.connection, row.sync_auth) == ("none", "", "none")


def test_a_listing_defaults_to_none(api: APIClient) -> None:
    body = {**BODY, "auth": {"kind": "user", "connection": "tp"}}
    created = api.post("/api/v1/upstreams/", body, format="json")
    assert created.status_code == 201, created.json()
    assert created.json()["auth"] == {"kind": "user", "connection": "tp", "listing": {"kind": "none"}}


@pytest.mark.parametrize(("auth", "why"), [
    ({"kind": "user", "connection": "nope"}, "No connection provider 'nope'"),
    ({"kind": "user"}, "connection provider's slug"),
    ({"kind": "user", "connection": "tp", "token": "tp-at-abc"}, "never accepted"),
    ({"kind": "user", "connection": "tp", "listing": {"kind": "user", "connection": "tp"}},
     "Unknown auth kind"),
    ({"kind": "user", "connection": "tp", "listing": {"kind": "header", "env": "x y"}},
     "NAME of an environment"),
])
def test_bad_user_auth_is_a_400(api: APIClient, auth: dict[str, Any], why: str) -> None:
    answer = api.post("/api/v1/upstreams/", {**BODY, "auth": auth}, format="json")
    assert answer.status_code == 400, answer.json()
    assert why in str(answer.json())
    assert "tp-at-abc" not in str(answer.json())


def test_the_document_names_the_provider_never_a_token(api: APIClient) -> None:
    assert api.post("/api/v1/upstreams/", BODY, format="json").status_code == 201
    [item] = export_document()["upstreams"]
    assert (item["auth"], item["connection"], item["sync_auth"]) == ("user", "tp", "header")
