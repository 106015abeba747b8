"""Syncing an upstream MCP server into the registry (issue 40): a server of the official Python
SDK on loopback (``tests/support/sdk_upstream.py``), nobody here wrote it; real HTTP, real database."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from asgiref.sync import sync_to_async
from django.conf import settings
from django.test import override_settings

from mcp_django.conf import mcp_settings
from mcp_protocol.bus.base import CHANGES
from registry.models import ChangeSet, Resource, ResourceTemplate, Tool, Upstream, VirtualServer
from registry.snapshot import build_state
from registry.upstreams.config import UpstreamTarget
from registry.upstreams.review import apply_pending
from registry.upstreams.sync import sync_upstream
from tests.support.sdk_upstream import SdkUpstream
from tests.support.upstream import Upstream as PlainHttp

pytestmark = pytest.mark.django_db(transaction=True)
MEMORY_BUS = {"BACKEND": "mcp_protocol.bus.memory.MemoryBus", "OPTIONS": {}}


@pytest.fixture(autouse=True)
def loopback_allowed() -> Iterator[None]:
    bus = {**settings.MCP, "BUS": MEMORY_BUS}
    with override_settings(REGISTRY_HTTP_ALLOWED_HOSTS=["127.0.0.1"], MCP=bus):
        yield


@pytest.fixture
def up() -> Iterator[SdkUpstream]:
    with SdkUpstream() as server:
        yield server


def upstream_for(url: str, **fields: object) -> Upstream:
    return Upstream.objects.create(name="sdk", prefix="up", url=url, timeout=5, connect_timeout=2, **fields)


def changesets() -> int:
    return ChangeSet.objects.count()


def test_every_kind_is_mirrored_with_the_prefix_and_served_with_its_target(up: SdkUpstream) -> None:
    row = upstream_for(up.url)
    report = sync_upstream(row)
    assert report.error == "" and report.health == "up" and report.applied
    assert sorted(report.added) == ["memo://notes/{slug}", "memo://readme", "up_add", "up_echo", "up_greet"]
    echo = Tool.objects.get(name="up_echo")
    assert (echo.kind, echo.upstream_name, echo.description) == ("upstream", "echo", "Echo the text back.")
    assert echo.input_schema["properties"]["text"]["type"] == "string"
    assert Resource.objects.get(uri="memo://readme").mime_type == "text/plain"
    assert ResourceTemplate.objects.get(uri_template="memo://notes/{slug}").name == "up_note"
    row.refresh_from_db()
    assert row.health == "up" and row.last_sync_ok_at is not None and row.latency_ms is not None
    assert row.server_info["serverInfo"]["name"] == "sdk-upstream" and row.version == 1  # health: no bump

    state = build_state()
    spec = state.tools["up_echo"]
    assert spec.upstream == UpstreamTarget(spec.upstream.config, "echo")
    assert spec.upstream.config.url == up.url
    assert state.resources["memo://readme"].upstream.name == "memo://readme"
    assert state.template("memo://notes/{slug}").upstream.name == "memo://notes/{slug}"
    [greet] = [p for p in state.snapshot.prompts if p.name == "up_greet"]
    assert [(a.name, a.required) for a in greet.arguments] == [("who", True)]
    assert state.prompts["up_greet"].upstream.name == "greet"


def test_a_second_sync_of_an_unchanged_upstream_writes_no_change_set(up: SdkUpstream) -> None:
    row = upstream_for(up.url)
    sync_upstream(row)
    before = changesets()
    report = sync_upstream(row)
    assert not report.changed and report.health == "up"
    assert changesets() == before


def test_a_removed_tool_is_kept_missing_with_its_bindings_and_restored_when_listed(up: SdkUpstream) -> None:
    row = upstream_for(up.url)
    sync_upstream(row)
    VirtualServer.objects.create(slug="vs", name="vs", tools=["up_add"])
    up.server.remove_tool("add")
    report = sync_upstream(row)
    assert report.missing == ["up_add"] and report.health == "up"
    add = Tool.objects.get(name="up_add")
    assert add.upstream_missing and "up_add" not in build_state().tools
    assert VirtualServer.objects.get(slug="vs").tools == ["up_add"]  # the selection is kept
    up.server.add_tool(lambda a, b: a + b, name="add", description="Add two integers.")
    report = sync_upstream(row)
    assert report.restored == ["up_add"]
    assert "up_add" in build_state().tools and Tool.objects.get(pk=add.pk).upstream_missing is False


def test_an_upstream_down_during_a_sync_marks_nothing_missing(up: SdkUpstream) -> None:
    row = upstream_for(up.url)
    sync_upstream(row)
    up.stop()
    report = sync_upstream(row)
    assert report.health == "down" and "connect" in report.error.lower() and not report.missing
    assert not Tool.objects.filter(upstream_missing=True).exists()
    row.refresh_from_db()
    assert row.health == "down" and row.health_detail and row.last_sync_ok_at < row.last_sync_at


def test_a_server_that_is_not_mcp_marks_nothing_missing_and_health_says_why(up: SdkUpstream) -> None:
    row = upstream_for(up.url)
    sync_upstream(row)
    with PlainHttp() as plain:
        row.url = f"{plain.url}/status/200"
        row.save()
        report = sync_upstream(row)
    assert report.health == "down" and report.error and not report.missing
    assert Tool.objects.filter(upstream=row, upstream_missing=False).count() == 2


def test_an_empty_listing_where_tools_were_served_prunes_nothing_unless_allowed(up: SdkUpstream) -> None:
    row = upstream_for(up.url)
    sync_upstream(row)
    up.server.remove_tool("add")
    up.server.remove_tool("echo")
    report = sync_upstream(row)
    assert report.health == "degraded" and not report.missing
    assert "tools: the upstream listed none" in report.detail[0]
    assert Tool.objects.filter(upstream=row, upstream_missing=False).count() == 2
    report = sync_upstream(row, allow_empty=True)
    assert sorted(report.missing) == ["up_add", "up_echo"] and report.health == "up"


def test_a_name_past_64_characters_is_refused_with_the_reason_not_shortened(up: SdkUpstream) -> None:
    up.server.add_tool(lambda: "x", name="n" * 62, description="long")  # up_ + 62 = 65
    report = sync_upstream(upstream_for(up.url))
    [refused] = report.refused
    assert refused.name == "n" * 62 and "65 characters, past 64" in refused.reason
    assert not Tool.objects.filter(upstream_name="n" * 62).exists()
    assert "up_echo" in report.added and report.health == "up"


def test_a_name_or_uri_taken_by_another_row_is_refused_never_renamed(up: SdkUpstream) -> None:
    Tool.objects.create(name="up_echo", kind="template", template_text="mine")
    Resource.objects.create(uri="memo://readme", name="mine", text="mine")
    report = sync_upstream(upstream_for(up.url))
    assert sorted(r.name for r in report.refused) == ["echo", "memo://readme"]
    assert all("already exists" in r.reason for r in report.refused)
    assert Tool.objects.get(name="up_echo").kind == "template"


def test_review_mode_stores_the_diff_then_applies_it_and_refuses_a_stale_one(up: SdkUpstream) -> None:
    row = upstream_for(up.url, review_syncs=True)
    report = sync_upstream(row)
    assert report.pending and not report.applied and len(report.added) == 5
    assert not Tool.objects.filter(upstream=row).exists()
    row.refresh_from_db()
    assert row.pending_sync["report"]["added"] == report.added
    before = changesets()
    applied = apply_pending(row)
    assert applied.applied and sorted(applied.added) == sorted(report.added)
    assert changesets() == before + 1 and Tool.objects.filter(upstream=row).count() == 2
    assert apply_pending(row).error == "nothing is pending"

    up.server.remove_tool("add")
    assert sync_upstream(row).pending
    tool = Tool.objects.get(name="up_echo")
    tool.description = "edited meanwhile"
    tool.save()
    stale = apply_pending(row)
    assert stale.error.startswith("stale") and not Tool.objects.get(name="up_add").upstream_missing


def test_operator_overrides_survive_a_sync(up: SdkUpstream) -> None:
    row = upstream_for(up.url)
    sync_upstream(row)
    echo = Tool.objects.get(name="up_echo")
    echo.description, echo.upstream_overrides = "ours", ["description"]
    echo.save()
    up.server.remove_tool("echo")
    up.server.add_tool(lambda text: text, name="echo", description="Changed upstream.")
    sync_upstream(row)
    echo.refresh_from_db()
    assert echo.description == "ours"


def test_a_disabled_upstream_serves_none_of_its_rows(up: SdkUpstream) -> None:
    row = upstream_for(up.url)
    sync_upstream(row)
    row.enabled = False
    row.save()
    state = build_state()
    assert not any(t.startswith("up_") for t in state.tools) and "memo://readme" not in state.resources


def test_a_dry_run_writes_nothing(up: SdkUpstream) -> None:
    row = upstream_for(up.url)
    report = sync_upstream(row, apply=False)
    assert len(report.added) == 5 and not report.applied
    assert not Tool.objects.filter(upstream=row).exists()
    row.refresh_from_db()
    assert row.health == "unknown"


def test_a_host_not_allowed_is_refused_before_anything_is_sent(up: SdkUpstream) -> None:
    row = upstream_for(up.url)
    with override_settings(REGISTRY_HTTP_ALLOWED_HOSTS=["example.com"]):
        report = sync_upstream(row)
    assert report.health == "down" and "not an allowed host" in report.error


def test_the_legacy_sse_transport_is_used_when_the_post_answers_4xx(up: SdkUpstream) -> None:
    report = sync_upstream(upstream_for(up.sse_url))
    assert report.health == "up" and "up_echo" in report.added


async def test_added_and_removed_tools_publish_a_tools_message(up: SdkUpstream) -> None:
    subscription = await mcp_settings.backend("BUS").subscribe(CHANGES)
    messages = subscription.__aiter__()
    row = await sync_to_async(upstream_for)(up.url)
    assert (await asyncio.wait_for(messages.__anext__(), 5))["kind"] == "upstreams"
    await sync_to_async(sync_upstream, thread_sensitive=False)(row)
    # One change set: its messages, one per list, named after it.
    first = [await asyncio.wait_for(messages.__anext__(), 5) for _ in range(3)]
    assert [m["kind"] for m in first] == ["tools", "resources", "prompts"]
    assert len({m["changeset"] for m in first}) == 1
    up.server.remove_tool("add")
    await sync_to_async(sync_upstream, thread_sensitive=False)(row)
    message = await asyncio.wait_for(messages.__anext__(), 5)
    assert message["kind"] == "tools"
    cs = await sync_to_async(ChangeSet.objects.get)(pk=message["changeset"])
    assert cs.kinds == ["tools"] and cs.note == "sync of upstream sdk"
    await subscription.close()



def test_capabilities_that_changed_alone_are_a_change_set_so_workers_rebuild(up: SdkUpstream) -> None:
    """What our endpoints advertise follows the upstream's declared capabilities (issue 40 item 3),
    read when the snapshot is built: a sync that finds only them changed still publishes."""
    row = upstream_for(up.url)
    sync_upstream(row)
    row.refresh_from_db()
    declared = row.server_info["capabilities"]
    assert "tools" in declared
    Upstream.objects.filter(pk=row.pk).update(server_info={**row.server_info, "capabilities": {"tools": {}}})
    row.refresh_from_db()
    before = changesets()
    sync_upstream(row)
    assert changesets() == before + 1
    row.refresh_from_db()
    assert row.server_info["capabilities"] == declared
    sync_upstream(row)  # the same again: nothing
    assert changesets() == before + 1
