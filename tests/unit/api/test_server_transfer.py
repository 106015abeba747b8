"""Issue 39: virtual servers in the registry document (``/api/v1/registry/export`` and ``import``,
the commands, the fixtures): upserted on ``slug``, validated with JSON pointers, a dry run writes
nothing, ``replace`` deletes only when the document has a ``servers`` section, and writing them
needs the ``virtualserver`` permissions."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from registry.models import Tool, VirtualServer
from registry.transfer.documents import export_document

from .conftest import client_for, staff_with

pytestmark = pytest.mark.django_db

DOCS: dict[str, Any] = {
    "slug": "docs", "name": "Docs", "instructions": "Read only.", "tools": ["search"],
    "include_tags": ["docs"], "exclude_tags": ["write"], "auth_modes": ["keys"], "rate_limit": "60/60",
}


def imported(api: APIClient, document: dict[str, Any], query: str = "") -> dict[str, Any]:
    answer = api.post(f"/api/v1/registry/import{query}", document, format="json")
    assert answer.status_code == 200, answer.content
    body: dict[str, Any] = answer.json()
    return body


def test_servers_are_exported_with_their_selection_and_imported_back_unchanged(api: APIClient) -> None:
    VirtualServer.objects.create(**DOCS)
    exported = api.get("/api/v1/registry/export").json()
    [item] = exported["servers"]
    assert {k: item[k] for k in DOCS} == DOCS
    assert not {"id", "version", "created_at", "updated_at"} & set(item)
    VirtualServer.objects.all().delete()
    assert imported(api, exported)["servers"]["created"] == ["docs"]
    assert export_document()["servers"] == exported["servers"]
    assert imported(api, exported, "?mode=replace")["changed"] == 0


def test_an_import_upserts_servers_on_their_slug_and_a_dry_run_writes_nothing(api: APIClient) -> None:
    VirtualServer.objects.create(**DOCS)
    document = {"servers": [{**DOCS, "tools": ["search", "fetch"]}, {"slug": "ops", "name": "Ops"}]}
    dry = imported(api, document, "?dry_run=1")
    assert (dry["servers"]["created"], dry["servers"]["updated"]) == (["ops"], ["docs"])
    assert {"path": "/tools/1", "before": None, "after": "fetch"} in dry["servers"]["diff"]["docs"]
    assert list(VirtualServer.objects.values_list("slug", flat=True)) == ["docs"]
    imported(api, document)
    docs = VirtualServer.objects.get(slug="docs")
    assert (docs.tools, docs.version) == (["search", "fetch"], 2)
    assert VirtualServer.objects.filter(slug="ops").exists()


def test_replace_deletes_servers_only_when_the_document_has_a_servers_section(api: APIClient) -> None:
    VirtualServer.objects.create(**DOCS)
    tools = {"tools": [{"name": "t", "kind": "template", "template_text": "x"}]}
    assert imported(api, tools, "?mode=replace").get("servers", {}).get("deleted") == []
    assert VirtualServer.objects.filter(slug="docs").exists()  # an older document leaves them be
    answer = imported(api, {**tools, "servers": []}, "?mode=replace")
    assert answer["servers"]["deleted"] == ["docs"] and not VirtualServer.objects.exists()


def test_a_bad_server_is_refused_with_its_pointer_and_nothing_is_written(api: APIClient) -> None:
    document = {
        "tools": [{"name": "t", "kind": "template", "template_text": "x"}],
        "servers": [
            {"slug": "api", "name": "Reserved"},
            {"slug": "ok", "name": "Ok", "auth_modes": ["magic"]},
            {"slug": "ok2", "name": "Ok", "rate_limit": "fast"},
            {"slug": "ok3", "name": "x", "colour": 1},
        ],
    }
    answer = api.post("/api/v1/registry/import", document, format="json")
    assert answer.status_code == 400
    paths = {e["path"] for e in answer.json()["errors"]}
    assert {"/servers/0/slug", "/servers/1/auth_modes", "/servers/2/rate_limit", "/servers/3/colour"} <= paths
    assert not Tool.objects.exists() and not VirtualServer.objects.exists()


def test_importing_servers_needs_the_virtualserver_permissions_and_exporting_the_view_one() -> None:
    definitions = [f"{action}_{model}" for model in ("tool", "resource", "resourcetemplate", "prompt")
                   for action in ("add", "change", "delete", "view")]
    without = client_for(staff_with(*definitions))
    document = {"servers": [{"slug": "docs", "name": "Docs"}]}
    assert without.post("/api/v1/registry/import", document, format="json").status_code == 403
    assert without.post("/api/v1/registry/import", {"tools": []}, format="json").status_code == 200
    servers = [f"{action}_virtualserver" for action in ("add", "change", "delete", "view")]
    editor = client_for(staff_with(*definitions, *servers, "view_skill", "view_upstream"))
    assert editor.post("/api/v1/registry/import", document, format="json").status_code == 200
    assert editor.get("/api/v1/registry/export").status_code == 200
    assert without.get("/api/v1/registry/export").status_code == 403


@pytest.mark.django_db(transaction=True)
def test_an_export_at_a_change_set_has_the_servers_as_they_were() -> None:
    server = VirtualServer.objects.create(**DOCS)
    at = server.history.latest().changeset_id
    server.tools = ["search", "fetch"]
    server.save()
    assert [s["tools"] for s in export_document(at=at)["servers"]] == [["search"]]
    assert [s["tools"] for s in export_document()["servers"]] == [["search", "fetch"]]


def test_tool_search_fields_and_pins_travel_in_the_registry_document(api: APIClient) -> None:
    # Issue 41: a server's tool search mode and a tool's always_load are exported and imported.
    VirtualServer.objects.create(**DOCS, tool_search="auto", tool_search_threshold=7, call_tool_name="run")
    Tool.objects.create(name="search", kind="template", template_text="x", always_load=True,
                        input_schema={"type": "object"})
    exported = api.get("/api/v1/registry/export").json()
    [server] = exported["servers"]
    assert (server["tool_search"], server["tool_search_threshold"]) == ("auto", 7)
    assert server["call_tool_name"] == "run"
    assert [t["always_load"] for t in exported["tools"]] == [True]
    VirtualServer.objects.all().delete()
    Tool.objects.all().delete()
    imported(api, exported)
    assert VirtualServer.objects.get(slug="docs").search_spec().threshold == 7
    assert Tool.objects.get(name="search").always_load is True
