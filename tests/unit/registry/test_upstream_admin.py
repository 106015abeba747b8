"""The upstreams' admin (issue 40 item 5) and mirrored rows in the definitions' admin: the list with
health badges and counts, the change form's parts, Test connection / Sync now / the review screen
(Approve, Discard) against a real upstream on loopback (the official Python SDK's server), the
permissions (view to see, change to act), and a mirrored tool's page (upstream-owned fields
read-only, overrides recorded, filters)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from django.conf import settings
from django.contrib.auth.models import Permission, User
from django.test import Client, override_settings
from django.urls import reverse

from registry.models import ChangeSet, Tool, Upstream
from tests.support.sdk_upstream import SdkUpstream

pytestmark = pytest.mark.django_db(transaction=True)
MEMORY_BUS = {"BACKEND": "mcp_protocol.bus.memory.MemoryBus", "OPTIONS": {}}
SCHEMA = {"type": "object", "properties": {"q": {"type": "string"}}}


@pytest.fixture(autouse=True)
def loopback_allowed() -> Iterator[None]:
    with override_settings(
        REGISTRY_HTTP_ALLOWED_HOSTS=["127.0.0.1", "mcp.vendor.example"],
        MCP={**settings.MCP, "BUS": MEMORY_BUS},
    ):
        yield


@pytest.fixture
def up() -> Iterator[SdkUpstream]:
    with SdkUpstream() as server:
        yield server


def viewer() -> Client:
    user = User.objects.create_user("viewer", password="pw", is_staff=True)
    user.user_permissions.set(Permission.objects.filter(codename__in=["view_upstream", "view_tool"]))
    client = Client()
    client.force_login(user)
    return client


def vendor() -> Upstream:
    return Upstream.objects.create(
        name="vendor", prefix="vnd", url="https://mcp.vendor.example/mcp", health="degraded"
    )


def test_the_list_shows_health_badges_and_counts(admin_client: Client) -> None:
    row = vendor()
    Tool.objects.create(name="vnd_a", kind="upstream", upstream=row, upstream_name="a")
    Tool.objects.create(name="vnd_b", kind="upstream", upstream=row, upstream_name="b", upstream_missing=True)
    page = admin_client.get(reverse("admin:registry_upstream_changelist")).content.decode()
    assert "upstream-health-degraded" in page and "Degraded" in page
    assert '<td class="field-mirrored">2</td>' in page and '<td class="field-missing">1</td>' in page


def test_the_change_form_has_its_parts_and_saves(admin_client: Client) -> None:
    row = vendor()
    url = reverse("admin:registry_upstream_change", args=[row.pk])
    page = admin_client.get(url).content.decode()
    for part in ("Connection", "Authentication", "Limits", "Sync", "Health"):
        assert "<h2" in page and part in page
    assert 'id="upstream-test"' in page and 'id="upstream-sync"' in page
    data = {
        "name": "vendor",
        "prefix": "vnd",
        "url": "https://mcp.vendor.example/mcp",
        "transport": "auto",
        "auth": "header",
        "auth_header": "Authorization",
        "auth_secret_env": "DATABASE_URL",
        "oauth_token_url": "",
        "oauth_client_id": "",
        "oauth_scopes": "[]",
        "timeout": "30",
        "connect_timeout": "5",
        "max_concurrency": "16",
        "sync_interval": "300",
        "enabled": "on",
        "opened_version": "1",
    }
    refused = admin_client.post(url, data)
    assert refused.status_code == 200 and "cannot be used" in refused.content.decode()
    saved = admin_client.post(url, {**data, "auth_secret_env": "MCP_TOOL_SECRET_VENDOR"})
    assert saved.status_code == 302
    row.refresh_from_db()
    assert row.auth_secret_env == "MCP_TOOL_SECRET_VENDOR"


def test_test_connection_and_sync_now_show_what_happened(admin_client: Client, up: SdkUpstream) -> None:
    row = Upstream.objects.create(name="sdk", prefix="up", url=up.url, timeout=5, connect_timeout=2)
    tested = admin_client.post(reverse("admin:registry_upstream_test", args=[row.pk])).content.decode()
    assert 'id="probe-ok"' in tested and "sdk-upstream" in tested
    synced = admin_client.post(reverse("admin:registry_upstream_sync", args=[row.pk])).content.decode()
    assert "up_echo" in synced and 'id="sync-health">up<' in synced
    changeset = ChangeSet.objects.latest("pk")
    assert (changeset.source, changeset.actor) == ("admin", "user:admin")
    assert admin_client.get(reverse("admin:registry_upstream_sync", args=[row.pk])).status_code == 405


def test_the_review_screen_approves_or_discards_the_pending_diff(
    admin_client: Client, up: SdkUpstream
) -> None:
    row = Upstream.objects.create(
        name="sdk", prefix="up", url=up.url, timeout=5, connect_timeout=2, review_syncs=True
    )
    review = reverse("admin:registry_upstream_review", args=[row.pk])
    assert 'id="nothing-pending"' in admin_client.get(review).content.decode()
    synced = admin_client.post(reverse("admin:registry_upstream_sync", args=[row.pk])).content.decode()
    assert 'id="sync-pending"' in synced and not Tool.objects.exists()
    page = admin_client.get(review).content.decode()
    assert "up_echo" in page and 'id="upstream-approve"' in page and 'id="upstream-discard"' in page
    assert (
        "(pending)"
        in admin_client.get(reverse("admin:registry_upstream_change", args=[row.pk])).content.decode()
    )

    assert admin_client.post(review, {"decision": "discard"}).status_code == 302
    assert 'id="nothing-pending"' in admin_client.get(review).content.decode()

    admin_client.post(reverse("admin:registry_upstream_sync", args=[row.pk]))
    approved = admin_client.post(review, {"decision": "approve"}).content.decode()
    assert "applied" in approved and set(Tool.objects.values_list("name", flat=True)) == {"up_echo", "up_add"}
    again = admin_client.post(review, {"decision": "approve"}, follow=True).content.decode()
    assert "nothing is pending" in again
    assert admin_client.post(review, {"decision": "maybe"}).status_code == 400


def test_view_permission_sees_change_permission_acts() -> None:
    row = vendor()
    client = viewer()
    assert client.get(reverse("admin:registry_upstream_changelist")).status_code == 200
    page = client.get(reverse("admin:registry_upstream_change", args=[row.pk])).content.decode()
    assert 'id="upstream-sync"' not in page
    for name in ("test", "sync", "review"):
        assert (
            client.post(
                reverse(f"admin:registry_upstream_{name}", args=[row.pk]), {"decision": "approve"}
            ).status_code
            == 403
        ), name
    assert client.get(reverse("admin:registry_upstream_review", args=[row.pk])).status_code == 200
    nobody = Client()
    nobody.force_login(User.objects.create_user("nobody", password="pw", is_staff=True))
    assert nobody.get(reverse("admin:registry_upstream_review", args=[row.pk])).status_code == 403


def test_a_mirrored_tool_edits_only_its_overrides_and_lists_its_upstream(admin_client: Client) -> None:
    row = vendor()
    tool = Tool.objects.create(
        name="vnd_search",
        kind="upstream",
        upstream=row,
        upstream_name="search",
        input_schema=SCHEMA,
        description="Search",
        upstream_missing=True,
    )
    Tool.objects.create(name="ours", kind="template", template_text="hi")
    url = reverse("admin:registry_tool_change", args=[tool.pk])
    page = admin_client.get(url).content.decode()
    assert "Mirrored from an upstream" in page and "<code>search</code>" in page
    assert 'name="input_schema"' not in page and 'name="kind"' not in page and 'name="description"' in page
    saved = admin_client.post(
        url,
        {
            "name": "vnd_search",
            "title": "",
            "description": "Search the catalog",
            "enabled": "on",
            "annotations": "null",
            "tags": json.dumps(["vendor"]),
            "opened_version": str(tool.version),
        },
    )
    assert saved.status_code == 302, saved.content.decode()[:2000]
    tool.refresh_from_db()
    assert tool.description == "Search the catalog" and tool.input_schema == SCHEMA
    assert tool.upstream_overrides == ["description", "tags"]

    listing = reverse("admin:registry_tool_changelist")
    filtered = admin_client.get(listing, {"upstream__id__exact": row.pk}).content.decode()
    assert "vnd_search" in filtered and ">ours<" not in filtered and "upstream-missing" in filtered
    assert ">ours<" in admin_client.get(listing, {"upstream_missing__exact": "0"}).content.decode()


def test_deleting_an_upstream_in_the_admin_deletes_its_mirrored_rows(admin_client: Client) -> None:
    row = vendor()
    Tool.objects.create(name="vnd_a", kind="upstream", upstream=row, upstream_name="a")
    url = reverse("admin:registry_upstream_delete", args=[row.pk])
    confirm = admin_client.get(url).content.decode()
    assert "vnd_a" in confirm and "protected" not in confirm.lower()
    assert admin_client.post(url, {"post": "yes"}).status_code == 302
    assert not Upstream.objects.exists() and not Tool.objects.exists()
    # The list's bulk action too.
    row = vendor()
    Tool.objects.create(name="vnd_b", kind="upstream", upstream=row, upstream_name="b")
    changelist = reverse("admin:registry_upstream_changelist")
    answer = admin_client.post(
        changelist, {"action": "delete_selected", "_selected_action": [row.pk], "post": "yes"}
    )
    assert answer.status_code == 302 and not Upstream.objects.exists() and not Tool.objects.exists()


def test_the_list_action_syncs_the_selected_upstreams(admin_client: Client, up: SdkUpstream) -> None:
    row = Upstream.objects.create(name="sdk", prefix="up", url=up.url, timeout=5, connect_timeout=2)
    down = Upstream.objects.create(
        name="gone", prefix="gone", url="http://127.0.0.1:9/mcp", connect_timeout=1
    )
    answer = admin_client.post(
        reverse("admin:registry_upstream_changelist"),
        {"action": "sync_selected", "_selected_action": [row.pk, down.pk]},
        follow=True,
    )
    page = answer.content.decode()
    assert "Sdk: synced (5 added" in page and "Not synced: gone: ConnectError" in page
    assert Tool.objects.filter(upstream=row).count() == 2


def test_a_mirrored_prompt_shows_its_arguments_read_only(admin_client: Client) -> None:
    from registry.models import Prompt, PromptArgument

    prompt = Prompt.objects.create(name="vnd_greet", upstream=vendor(), upstream_name="greet")
    PromptArgument.objects.create(prompt=prompt, name="who", required=True, position=0)
    page = admin_client.get(reverse("admin:registry_prompt_change", args=[prompt.pk])).content.decode()
    assert "who" in page and 'name="arguments-0-name"' not in page and 'name="description"' in page
