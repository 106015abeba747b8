"""Import / export of the whole registry: ``/api/v1/registry/export`` and ``import`` and the
``export_registry`` / ``import_registry`` commands. Atomic, idempotent, every error with its path,
one fan-out per import."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.conf import settings
from django.core.management import CommandError, call_command
from django.test import override_settings
from rest_framework.test import APIClient

from mcp_django.conf import mcp_settings
from mcp_protocol.bus.base import CHANGES
from registry.models import Prompt, Resource, Tool
from registry.transfer.documents import export_document
from registry.transfer.fixtures import load_document, read_fixture

from .conftest import TEMPLATE_TOOL, client_for, staff_with

pytestmark = pytest.mark.django_db

SMALL: dict[str, Any] = {
    "tools": [TEMPLATE_TOOL],
    "resources": [{"uri": "file:///a.txt", "name": "a", "text": "A"}],
    "prompts": [{"name": "p", "arguments": [{"name": "x"}],
                 "messages": [{"role": "user", "content": {"type": "text", "text": "{{ x }}"}}]}],
}


def snapshot() -> dict[str, Any]:
    return json.loads(json.dumps(export_document()))


def test_export_then_import_changes_nothing(api: APIClient) -> None:
    load_document(read_fixture("demo"))
    exported = api.get("/api/v1/registry/export").json()
    assert [t["name"] for t in exported["tools"]] == list(Tool.objects.values_list("name", flat=True))
    versions = list(Tool.objects.values_list("version", flat=True))
    for mode in ("merge", "replace"):
        answer = api.post(f"/api/v1/registry/import?mode={mode}", exported, format="json")
        assert answer.status_code == 200 and answer.json()["changed"] == 0, answer.json()
    assert list(Tool.objects.values_list("version", flat=True)) == versions  # nothing was saved


def test_merge_creates_and_updates_and_replace_also_deletes(api: APIClient) -> None:
    load_document(read_fixture("demo"))
    before = Tool.objects.count()
    answer = api.post("/api/v1/registry/import", SMALL, format="json").json()
    assert answer["tools"] == {"created": ["api_tool"], "updated": [], "deleted": [], "unchanged": 0}
    assert Tool.objects.count() == before + 1
    changed = {**SMALL, "tools": [{**TEMPLATE_TOOL, "title": "new title"}]}
    answer = api.post("/api/v1/registry/import?mode=replace", changed, format="json").json()
    assert answer["tools"]["updated"] == ["api_tool"] and len(answer["tools"]["deleted"]) == before
    assert list(Tool.objects.values_list("name", "title")) == [("api_tool", "new title")]
    assert answer["resource_templates"]["unchanged"] == 0 and Prompt.objects.get().arguments.count() == 1


def test_a_dry_run_reports_and_writes_nothing(api: APIClient) -> None:
    answer = api.post("/api/v1/registry/import?dry_run=1", SMALL, format="json").json()
    assert answer["dry_run"] is True and answer["changed"] == 3
    assert not Tool.objects.exists() and not Prompt.objects.exists()


BAD: list[tuple[Any, str, str]] = [
    (["not", "an", "object"], "", "JSON object of sections"),
    ({"toolz": []}, "/toolz", "Unknown section"),
    ({"tools": {}}, "/tools", "must be a JSON list"),
    ({"tools": [{"title": "no name"}]}, "/tools/0", "with a 'name'"),
    ({"tools": [{**TEMPLATE_TOOL, "colour": "red"}]}, "/tools/0/colour", "Unknown field"),
    ({"tools": [{**TEMPLATE_TOOL, "input_schema": {"type": "object", "properties": {"a": {"type": 1}}}}]},
     "/tools/0/input_schema", "at /properties/a/type"),
    ({"tools": [{**TEMPLATE_TOOL, "kind": "handler"}]}, "/tools/0/handler", "Choose a registered"),
    ({"tools": [TEMPLATE_TOOL, TEMPLATE_TOOL]}, "/tools/1/name", "appears twice"),
    ({"resources": [{"uri": "nope", "name": "a"}]}, "/resources/0/uri", "absolute URI"),
    ({"prompts": [{"name": "p", "messages": [{"role": "user", "content": {"type": "text", "text": "x"}},
                                             {"role": "user", "content": {"type": "text"}}]}]},
     "/prompts/0/messages/1/content", "needs text"),
    ({"prompts": [{"name": "p", "arguments": [{"name": "a"}, {"name": "a"}]}]},
     "/prompts/0/arguments/1/name", "Another argument"),
    ({"prompts": [{"name": "p", "arguments": [{"name": "a", "extra": 1}]}]},
     "/prompts/0/arguments/0", "unknown"),
]


@pytest.mark.parametrize(("document", "path", "message"), BAD, ids=[b[1] or "root" for b in BAD])
def test_a_bad_document_is_refused_with_the_path_of_each_error_and_changes_nothing(
        api: APIClient, document: Any, path: str, message: str) -> None:
    load_document(SMALL)
    before = snapshot()
    # The good items around the bad one are not applied either: all or nothing.
    if isinstance(document, dict) and "resources" not in document:
        document = {**document, "resources": [{"uri": "file:///new.txt", "name": "n", "text": "N"}]}
    for mode in ("merge", "replace"):
        answer = api.post(f"/api/v1/registry/import?mode={mode}", document, format="json")
        assert answer.status_code == 400
        errors = answer.json()["errors"]
        assert any(e["path"] == path and message in e["message"] for e in errors), errors
    assert snapshot() == before


def test_bad_query_parameters_are_400(api: APIClient) -> None:
    assert api.post("/api/v1/registry/import?mode=overwrite", SMALL, format="json").status_code == 400
    assert not Tool.objects.exists()


def test_import_and_export_need_permissions_on_every_kind(api: APIClient) -> None:
    # Skills are a kind too: the export carries them with their files (issue 37 item 5).
    viewer = client_for(
        staff_with("view_tool", "view_resource", "view_resourcetemplate", "view_prompt", "view_skill",
                   "view_virtualserver", "view_upstream")
    )
    assert viewer.get("/api/v1/registry/export").status_code == 200
    assert viewer.post("/api/v1/registry/import", SMALL, format="json").status_code == 403
    assert client_for(staff_with("view_tool")).get("/api/v1/registry/export").status_code == 403


@pytest.mark.django_db(transaction=True)
async def test_an_import_is_one_fan_out_and_reimporting_publishes_nothing(superuser: Any) -> None:
    with override_settings(MCP={**settings.MCP, "BUS": {"BACKEND": "mcp_protocol.bus.memory.MemoryBus",
                                                        "OPTIONS": {}}}):
        subscription = await mcp_settings.backend("BUS").subscribe(CHANGES)
        messages = subscription.__aiter__()
        client = APIClient()
        await sync_to_async(client.force_login)(superuser)
        post = sync_to_async(client.post)
        assert (await post("/api/v1/registry/import", SMALL, format="json")).status_code == 200
        kinds = sorted([(await asyncio.wait_for(anext(messages), 5))["kind"] for _ in range(3)])
        assert kinds == ["prompts", "resources", "tools"]  # one per kind, not one per row
        assert (await post("/api/v1/registry/import", SMALL, format="json")).json()["changed"] == 0
        # Nothing was published for it: the next message is this later write's.
        await sync_to_async(Resource.objects.filter(uri="file:///a.txt").update)(text="B")
        message = await asyncio.wait_for(anext(messages), 5)
        assert (message["kind"], message["uris"]) == ("resources", ["file:///a.txt"])
        await subscription.close()


def test_the_commands_round_trip_through_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    load_document(read_fixture("demo"))
    path = tmp_path / "registry.json"
    call_command("export_registry", "--output", str(path))
    assert json.loads(path.read_text()) == snapshot()
    call_command("import_registry", str(path), "--mode", "replace")
    assert json.loads(capsys.readouterr().out)["changed"] == 0
    path.write_text(json.dumps(SMALL))
    call_command("import_registry", str(path), "--mode", "replace", "--dry-run")
    assert json.loads(capsys.readouterr().out)["tools"]["created"] == ["api_tool"]
    path.write_text(json.dumps({"tools": [{"name": "bad name"}]}))
    with pytest.raises(CommandError, match="nothing was imported"):
        call_command("import_registry", str(path))
    assert "/tools/0/name:" in capsys.readouterr().err
    assert not Tool.objects.filter(name="api_tool").exists()  # the dry run wrote nothing
