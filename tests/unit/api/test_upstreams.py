"""``/api/v1/upstreams/`` (issue 40 item 5): CRUD with ETag and ``If-Match``, the ``auth`` object
(environment variable names only: a secret value is a 400), the outbound rules on the URL, model
permissions on reads, writes and the actions, and the deletion of an upstream with its mirrored
rows."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import override_settings
from rest_framework.test import APIClient

from registry.models import ChangeSet, Tool, Upstream

from .conftest import client_for, staff_with

pytestmark = pytest.mark.django_db

BODY: dict[str, Any] = {
    "name": "vendor",
    "prefix": "vnd",
    "url": "https://mcp.vendor.example/mcp",
    "transport": "auto",
    "auth": {"kind": "header", "header": "Authorization", "env": "MCP_TOOL_SECRET_VENDOR"},
    "timeout": 20.0,
    "max_concurrency": 4,
    "review_syncs": True,
}
ALLOWED = override_settings(REGISTRY_HTTP_ALLOWED_HOSTS=["mcp.vendor.example", "auth.vendor.example"])


@pytest.fixture(autouse=True)
def allowed_hosts() -> Any:
    with ALLOWED:
        yield


def test_create_read_patch_and_delete_with_etags(api: APIClient) -> None:
    created = api.post("/api/v1/upstreams/", BODY, format="json")
    assert created.status_code == 201, created.json()
    assert created["ETag"] == '"1"'
    body = created.json()
    assert body["auth"] == BODY["auth"] and body["health"] == "unknown"
    assert body["mirrored"] == {
        "tools": 0,
        "resources": 0,
        "resource_templates": 0,
        "prompts": 0,
        "missing": 0,
    }
    row = Upstream.objects.get(name="vendor")
    assert (row.auth, row.auth_header, row.auth_secret_env) == (
        "header",
        "Authorization",
        "MCP_TOOL_SECRET_VENDOR",
    )

    url = f"/api/v1/upstreams/{row.pk}/"
    got = api.get(url)
    assert got.status_code == 200 and got["ETag"] == '"1"'
    assert {k: got.json()[k] for k in BODY} == BODY

    oauth = {
        "kind": "client_credentials",
        "token_url": "https://auth.vendor.example/token",
        "client_id": "mcpsite",
        "env": "MCP_TOOL_SECRET_VENDOR_CLIENT",
        "scopes": ["tools"],
    }
    patched = api.patch(url, {"auth": oauth, "sync_interval": 60}, format="json", HTTP_IF_MATCH='"1"')
    assert patched.status_code == 200, patched.json()
    assert patched["ETag"] == '"2"' and patched.json()["auth"] == oauth
    row.refresh_from_db()
    assert (row.auth, row.oauth_client_id, row.oauth_scopes, row.sync_interval) == (
        "client_credentials",
        "mcpsite",
        ["tools"],
        60,
    )

    stale = api.patch(url, {"enabled": False}, format="json", HTTP_IF_MATCH='"1"')
    assert stale.status_code == 412
    assert api.patch(url, {"auth": {"kind": "none"}}, format="json").json()["auth"] == {"kind": "none"}
    row.refresh_from_db()
    assert (row.auth_secret_env, row.oauth_token_url, row.oauth_scopes) == ("", "", [])

    assert api.delete(url, HTTP_IF_MATCH='"1"').status_code == 412
    assert api.delete(url).status_code == 204
    assert not Upstream.objects.exists()


@pytest.mark.parametrize(
    ("change", "field", "words"),
    [
        ({"prefix": "Bad-Prefix"}, "prefix", "lower-case letters and digits"),
        ({"prefix": "x" * 17}, "prefix", "16"),
        ({"url": "ftp://mcp.vendor.example/"}, "url", "http"),
        (
            {"auth": {"kind": "header", "env": "MCP_TOOL_SECRET_X", "value": "Bearer sk-live-123"}},
            "auth",
            "a secret value is never accepted",
        ),
        (
            {
                "auth": {
                    "kind": "client_credentials",
                    "token_url": "https://auth.vendor.example/token",
                    "client_id": "c",
                    "env": "MCP_TOOL_SECRET_X",
                    "client_secret": "hunter2",
                }
            },
            "auth",
            "a secret value is never accepted",
        ),
        (
            {"auth": {"kind": "header", "env": "Bearer sk-live-123"}},
            "auth",
            "NAME of an environment variable",
        ),
        ({"auth": {"kind": "basic"}}, "auth", "Unknown auth kind 'basic'"),
        ({"auth": {"kind": "none", "header": "X"}}, "auth", "Unknown member(s) header"),
        ({"auth": {"kind": "header", "env": "DATABASE_URL"}}, "auth_secret_env", "cannot be used"),
        ({"auth": {"kind": "header", "env": ""}}, "auth_secret_env", "environment variable"),
        ({"auth": {"kind": "client_credentials", "env": "MCP_TOOL_SECRET_X"}}, "oauth_token_url", "token"),
        ({"url": "https://elsewhere.example/mcp"}, "url", "not in REGISTRY_HTTP_ALLOWED_HOSTS"),
        ({"timeout": 0}, "timeout", "more than 0"),
        ({"max_concurrency": 0}, "max_concurrency", "At least 1"),
        ({"transport": "websocket"}, "transport", "not a valid choice"),
        ({"health": "up", "colour": "red"}, "colour", "Unknown field"),
    ],
)
def test_bad_bodies_are_400s_naming_the_field(
    api: APIClient, change: dict[str, Any], field: str, words: str
) -> None:
    answer = api.post("/api/v1/upstreams/", {**BODY, **change}, format="json")
    assert answer.status_code == 400, answer.json()
    assert words in " ".join(answer.json()[field]), answer.json()
    assert "sk-live" not in answer.content.decode() and "hunter2" not in answer.content.decode()
    assert not Upstream.objects.exists()


@override_settings(REGISTRY_HTTP_ALLOWED_HOSTS=["*"], REGISTRY_HTTP_FORBID_PRIVATE=True)
def test_a_private_address_is_refused_by_the_outbound_rules(api: APIClient) -> None:
    for url in ("http://127.0.0.1:9000/mcp", "http://169.254.169.254/latest", "http://[::1]/mcp"):
        answer = api.post("/api/v1/upstreams/", {**BODY, "url": url}, format="json")
        assert answer.status_code == 400
        assert "private address" in answer.json()["url"][0]
    # Disabled, nothing connects to it: kept as a draft, as a disabled http tool may be.
    draft = api.post(
        "/api/v1/upstreams/", {**BODY, "url": "http://127.0.0.1:9000/mcp", "enabled": False}, format="json"
    )
    assert draft.status_code == 201, draft.json()


def test_a_name_or_prefix_taken_is_a_400(api: APIClient) -> None:
    assert api.post("/api/v1/upstreams/", BODY, format="json").status_code == 201
    again = api.post("/api/v1/upstreams/", {**BODY, "name": "other"}, format="json")
    assert again.status_code == 400 and "prefix" in again.json()


def test_model_permissions_guard_reads_writes_and_actions() -> None:
    row = Upstream.objects.create(name="vendor", prefix="vnd", url="https://mcp.vendor.example/mcp")
    nobody = client_for(staff_with())
    assert nobody.get("/api/v1/upstreams/").status_code == 403
    viewer = client_for(staff_with("view_upstream"))
    assert viewer.get("/api/v1/upstreams/").status_code == 200
    assert viewer.get(f"/api/v1/upstreams/{row.pk}/").status_code == 200
    assert viewer.patch(f"/api/v1/upstreams/{row.pk}/", {"enabled": False}, format="json").status_code == 403
    assert viewer.post("/api/v1/upstreams/", BODY, format="json").status_code == 403
    for action in ("sync", "sync/approve", "test"):
        assert viewer.post(f"/api/v1/upstreams/{row.pk}/{action}").status_code == 403, action
    assert APIClient().get("/api/v1/upstreams/").status_code == 401


@pytest.mark.django_db(transaction=True)  # each request commits its own change set, as served
def test_deleting_an_upstream_deletes_its_mirrored_rows_in_one_change_set(token: str) -> None:
    api = APIClient(HTTP_AUTHORIZATION=f"Bearer {token}")
    row = Upstream.objects.create(name="vendor", prefix="vnd", url="https://mcp.vendor.example/mcp")
    Tool.objects.create(name="vnd_search", kind="upstream", upstream=row, upstream_name="search")
    Tool.objects.create(name="vnd_fetch", kind="upstream", upstream=row, upstream_name="fetch")
    Tool.objects.create(name="ours", kind="template", template_text="hi")
    before = ChangeSet.objects.count()
    assert api.delete(f"/api/v1/upstreams/{row.pk}/").status_code == 204
    assert list(Tool.objects.values_list("name", flat=True)) == ["ours"]
    assert ChangeSet.objects.count() == before + 1
    last = ChangeSet.objects.latest("pk")
    assert (last.source, last.actor) == ("api", "token:tests")
    assert sorted(Tool.history.filter(changeset=last).values_list("name", flat=True)) == [
        "vnd_fetch",
        "vnd_search",
    ]
