"""``POST /api/v1/upstreams/<id>/test``, ``…/sync`` and ``…/sync/approve`` (issue 40 item 5) against
a real upstream on loopback: a server of the official Python SDK (``tests/support/sdk_upstream.py``).
An upstream failure is a 200 with the error, never a 5xx; a sync's change set is authored by the
caller; review mode answers with the pending diff, approved once (409 after, or when stale)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.conf import settings
from django.test import override_settings
from rest_framework.test import APIClient

from registry.models import ChangeSet, Tool, Upstream
from tests.support.sdk_upstream import SdkUpstream

pytestmark = pytest.mark.django_db(transaction=True)  # each request commits its change set, as served
MEMORY_BUS = {"BACKEND": "mcp_protocol.bus.memory.MemoryBus", "OPTIONS": {}}


@pytest.fixture(autouse=True)
def loopback_allowed() -> Iterator[None]:
    with override_settings(
        REGISTRY_HTTP_ALLOWED_HOSTS=["127.0.0.1"], MCP={**settings.MCP, "BUS": MEMORY_BUS}
    ):
        yield


@pytest.fixture
def up() -> Iterator[SdkUpstream]:
    with SdkUpstream() as server:
        yield server


@pytest.fixture
def client(token: str) -> APIClient:
    return APIClient(HTTP_AUTHORIZATION=f"Bearer {token}")


def upstream_for(url: str, **fields: object) -> Upstream:
    return Upstream.objects.create(name="sdk", prefix="up", url=url, timeout=5, connect_timeout=2, **fields)


def test_test_connects_and_initializes_only(client: APIClient, up: SdkUpstream) -> None:
    row = upstream_for(up.url)
    before = ChangeSet.objects.count()
    answer = client.post(f"/api/v1/upstreams/{row.pk}/test")
    assert answer.status_code == 200, answer.content
    body = answer.json()
    assert body["ok"] is True and body["server_info"]["name"] == "sdk-upstream"
    assert body["server_info"]["version"] == "9.9" and body["protocol_version"]
    assert "tools" in body["capabilities"] and body["latency_ms"] > 0
    assert not Tool.objects.exists() and ChangeSet.objects.count() == before  # nothing listed or written


def test_an_upstream_that_is_down_is_a_200_with_the_error(client: APIClient, up: SdkUpstream) -> None:
    row = upstream_for(up.url)
    up.stop()
    tested = client.post(f"/api/v1/upstreams/{row.pk}/test")
    assert tested.status_code == 200 and tested.json()["ok"] is False and tested.json()["error"]
    synced = client.post(f"/api/v1/upstreams/{row.pk}/sync")
    assert synced.status_code == 200
    assert synced.json()["error"] and synced.json()["health"] == "down" and not synced.json()["applied"]
    assert not Tool.objects.exists()


def test_sync_mirrors_and_its_change_set_names_the_caller(client: APIClient, up: SdkUpstream) -> None:
    row = upstream_for(up.url)
    answer = client.post(f"/api/v1/upstreams/{row.pk}/sync")
    assert answer.status_code == 200, answer.content
    report = answer.json()
    assert {"up_echo", "up_add", "up_greet"} <= set(report["added"]) and report["applied"] is True
    assert report["error"] == "" and report["health"] == "up"
    changeset = ChangeSet.objects.get(
        pk=Tool.objects.get(name="up_echo").history.latest("history_id").changeset_id
    )
    assert (changeset.source, changeset.actor) == ("api", "token:tests")
    assert "sync of upstream sdk" in changeset.note
    listed = client.get(f"/api/v1/upstreams/{row.pk}/").json()
    assert listed["health"] == "up" and listed["mirrored"]["tools"] == 2


def test_review_mode_answers_the_pending_diff_then_approves_it_once(
    client: APIClient, up: SdkUpstream
) -> None:
    row = upstream_for(up.url, review_syncs=True)
    synced = client.post(f"/api/v1/upstreams/{row.pk}/sync").json()
    assert synced["pending"] is True and synced["applied"] is False and "up_echo" in synced["added"]
    assert not Tool.objects.exists()
    approved = client.post(f"/api/v1/upstreams/{row.pk}/sync/approve")
    assert approved.status_code == 200, approved.content
    assert approved.json()["applied"] is True
    assert set(Tool.objects.values_list("name", flat=True)) == {"up_echo", "up_add"}
    changeset = ChangeSet.objects.latest("pk")
    assert (changeset.source, changeset.actor) == ("api", "token:tests") and "approved" in changeset.note
    again = client.post(f"/api/v1/upstreams/{row.pk}/sync/approve")
    assert again.status_code == 409 and "nothing is pending" in again.json()["detail"]


def test_a_stale_pending_diff_is_a_409(client: APIClient, up: SdkUpstream) -> None:
    row = upstream_for(up.url)
    client.post(f"/api/v1/upstreams/{row.pk}/sync")
    Upstream.objects.filter(pk=row.pk).update(review_syncs=True)
    up.server.remove_tool("add")
    assert client.post(f"/api/v1/upstreams/{row.pk}/sync").json()["missing"] == ["up_add"]
    # Someone edits a mirrored row between the review and the approval.
    client.patch(f"/api/v1/tools/{Tool.objects.get(name='up_echo').pk}/", {"title": "Echo"}, format="json")
    stale = client.post(f"/api/v1/upstreams/{row.pk}/sync/approve")
    assert stale.status_code == 409 and "stale" in stale.json()["detail"]
    assert not Tool.objects.get(name="up_add").upstream_missing
