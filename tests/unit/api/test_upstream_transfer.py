"""Upstreams in the registry document (issue 40 item 5): exported without secrets or health,
mirrored rows not exported as definitions but their overrides are, upserted on name, a round trip
through a real sync of the official SDK's server on loopback."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.conf import settings
from django.test import override_settings
from rest_framework.test import APIClient

from registry.models import ChangeSet, Tool, Upstream
from registry.transfer.documents import export_document, import_document
from registry.upstreams.sync import sync_upstream
from tests.support.sdk_upstream import SdkUpstream

pytestmark = pytest.mark.django_db(transaction=True)
SECRET = "Bearer sk-upstream-secret"
MEMORY_BUS = {"BACKEND": "mcp_protocol.bus.memory.MemoryBus", "OPTIONS": {}}


@pytest.fixture(autouse=True)
def loopback_allowed(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("MCP_TOOL_SECRET_SDK", SECRET)  # the header's value: sent, never exported
    bus = {**settings.MCP, "BUS": MEMORY_BUS}
    with override_settings(REGISTRY_HTTP_ALLOWED_HOSTS=["127.0.0.1"], MCP=bus):
        yield


@pytest.fixture
def up() -> Iterator[SdkUpstream]:
    with SdkUpstream() as server:
        yield server


def synced(url: str) -> Upstream:
    row = Upstream.objects.create(
        name="sdk",
        prefix="up",
        url=url,
        timeout=5,
        connect_timeout=2,
        auth="header",
        auth_secret_env="MCP_TOOL_SECRET_SDK",
    )
    assert sync_upstream(row).applied
    return row


def test_the_export_holds_the_configuration_and_overrides_not_the_mirrored_rows(
    api: APIClient, up: SdkUpstream
) -> None:
    row = synced(up.url)
    Tool.objects.create(name="ours", kind="template", template_text="hi")
    echo = Tool.objects.get(name="up_echo")
    assert (
        api.patch(
            f"/api/v1/tools/{echo.pk}/", {"description": "Say it back", "tags": ["t"]}, format="json"
        ).status_code
        == 200
    )
    document = api.get("/api/v1/registry/export").json()
    assert [t["name"] for t in document["tools"]] == ["ours"]
    assert "upstream" not in document["tools"][0] and "upstream_overrides" not in document["tools"][0]
    assert "sk-upstream-secret" not in api.get("/api/v1/registry/export").content.decode()
    (item,) = document["upstreams"]
    assert item["name"] == "sdk" and item["auth_secret_env"] == "MCP_TOOL_SECRET_SDK"  # a name, no secret
    for field in (
        "health",
        "health_detail",
        "last_sync_at",
        "latency_ms",
        "server_info",
        "pending_sync",
        "id",
    ):
        assert field not in item
    assert item["overrides"] == {"tools": {"echo": {"description": "Say it back", "tags": ["t"]}}}
    assert row.health == "up" or Upstream.objects.get().health == "up"


def test_a_round_trip_restores_the_upstream_then_its_overrides_after_a_sync(up: SdkUpstream) -> None:
    row = synced(up.url)
    echo = Tool.objects.get(name="up_echo")
    echo.title, echo.upstream_overrides = "Echo!", ["title"]
    echo.save()
    document = export_document()
    # As the last change set left it, rebuilt from the history: the same section.
    at = export_document(at=ChangeSet.objects.latest("pk").pk)
    assert at["upstreams"] == document["upstreams"] and at["tools"] == document["tools"] == []
    assert import_document(document).changed == 0  # importing an export changes nothing
    assert import_document(document, mode="replace").changed == 0  # replace keeps mirrored rows
    assert Tool.objects.filter(upstream=row).count() == 2

    row.delete()  # with its mirrored rows
    outcome = import_document(document)
    assert not outcome.errors and outcome.sections["upstreams"]["created"] == ["sdk"]
    assert outcome.sections["upstreams"]["unmatched"] == ["sdk/tools/echo"]  # not mirrored yet
    restored = Upstream.objects.get(name="sdk")
    assert (restored.prefix, restored.url, restored.auth_secret_env) == ("up", up.url, "MCP_TOOL_SECRET_SDK")
    assert sync_upstream(restored).applied
    again = import_document(document)
    assert (
        again.sections["upstreams"]["updated"] == ["sdk"] and again.sections["upstreams"]["unmatched"] == []
    )
    echo = Tool.objects.get(name="up_echo")
    assert echo.title == "Echo!" and echo.upstream_overrides == ["title"]
    sync_upstream(restored)  # the override survives the next sync
    assert Tool.objects.get(name="up_echo").title == "Echo!"


def test_a_bad_upstream_item_is_refused_with_its_path(up: SdkUpstream) -> None:
    synced(up.url)
    document = {
        "tools": [{"name": "up_echo", "kind": "template", "template_text": "hi"}],
        "upstreams": [
            {"name": "a", "prefix": "a", "url": "https://not-allowed.example/mcp", "health": "up"},
            {
                "name": "sdk",
                "prefix": "up",
                "url": up.url,
                "overrides": {
                    "tools": {"echo": {"input_schema": {}}},
                    "prompts": {"greet": {"annotations": {}}},
                    "widgets": {},
                },
            },
        ],
    }
    outcome = import_document(document)
    paths = {problem.path: problem.message for problem in outcome.errors}
    assert "mirrored from the upstream 'sdk'" in paths["/tools/0/name"]
    assert "never imported" in paths["/upstreams/0/health"]
    assert "REGISTRY_HTTP_ALLOWED_HOSTS" in paths["/upstreams/0/url"]
    assert "Only enabled, name" in paths["/upstreams/1/overrides/tools/echo"]
    assert "/upstreams/1/overrides/widgets" in paths
    assert "not annotations" in paths["/upstreams/1/overrides/prompts/greet"]  # a prompt has none
    assert not Upstream.objects.filter(name="a").exists()


def test_importing_upstreams_needs_the_upstream_permissions(up: SdkUpstream) -> None:
    from .conftest import client_for, staff_with

    definitions = [
        f"{action}_{model}"
        for model in ("tool", "resource", "resourcetemplate", "prompt")
        for action in ("add", "change", "delete", "view")
    ]
    without = client_for(staff_with(*definitions))
    document = {"upstreams": [{"name": "x", "prefix": "x", "url": up.url}]}
    assert without.post("/api/v1/registry/import", document, format="json").status_code == 403
    assert not Upstream.objects.exists()
