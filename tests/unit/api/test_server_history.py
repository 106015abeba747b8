"""Issue 39: a virtual server's versions are listed, diffed and reverted like a tool's
(``/api/v1/history/servers/<id>/``), and reading them needs ``view_virtualserver``."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from registry.changes.authorship import authored, of_user
from registry.models import ChangeSet, VirtualServer

from .conftest import client_for, staff_with

pytestmark = pytest.mark.django_db(transaction=True)


def edited_server() -> VirtualServer:
    server = VirtualServer.objects.create(slug="docs", name="Docs", tools=["search"])
    server.tools = ["search", "fetch"]
    server.instructions = "Read only."
    server.save()
    return server


def test_a_servers_versions_are_listed_newest_first_with_their_diff(api: APIClient) -> None:
    server = edited_server()
    page = api.get(f"/api/v1/history/servers/{server.pk}/").json()
    assert [(v["type"], v["key"], v["kind"]) for v in page["results"]] == [
        ("changed", "docs", "servers"), ("created", "docs", "servers")]
    newest = page["results"][0]["version"]
    detail = api.get(f"/api/v1/history/servers/{server.pk}/{newest}/").json()
    assert {"path": "/tools/1", "before": None, "after": "fetch"} in detail["diff"]
    assert {"path": "/instructions", "before": "", "after": "Read only."} in detail["diff"]
    assert detail["state"]["slug"] == "docs" and detail["state"]["tools"] == ["search", "fetch"]


def test_a_server_reverted_to_its_first_version_is_a_new_version_guarded_by_if_match(api: APIClient) -> None:
    server = edited_server()
    first = api.get(f"/api/v1/history/servers/{server.pk}/").json()["results"][-1]["version"]
    url = f"/api/v1/history/servers/{server.pk}/{first}/revert"
    assert api.post(url, HTTP_IF_MATCH='"1"').status_code == 412
    reverted = api.post(url, HTTP_IF_MATCH='"2"')
    assert reverted.status_code == 200, reverted.content
    assert reverted["ETag"] == '"3"'
    assert (reverted.json()["slug"], reverted.json()["tools"]) == ("docs", ["search"])
    server.refresh_from_db()
    assert (server.tools, server.instructions, server.version) == (["search"], "", 3)
    assert ChangeSet.objects.filter(note__startswith="revert of servers").exists()


def test_a_deleted_server_is_restored_by_reverting_to_a_version_before_its_deletion(api: APIClient) -> None:
    server = edited_server()
    pk = server.pk
    server.delete()
    versions = api.get(f"/api/v1/history/servers/{pk}/").json()["results"]
    assert versions[0]["type"] == "deleted"
    assert api.post(f"/api/v1/history/servers/{pk}/{versions[1]['version']}/revert").status_code == 200
    assert VirtualServer.objects.get(pk=pk).tools == ["search", "fetch"]


def test_reading_a_servers_history_needs_the_view_permission_on_servers() -> None:
    server = edited_server()
    url = f"/api/v1/history/servers/{server.pk}/"
    assert client_for(staff_with("view_changeset")).get(url).status_code == 403
    reader = client_for(staff_with("view_changeset", "view_virtualserver"))
    assert reader.get(url).status_code == 200
    # Reverting it: add, change and delete on servers.
    first = reader.get(url).json()["results"][-1]
    editor = client_for(staff_with("view_changeset", "view_virtualserver", "change_virtualserver"))
    assert editor.post(f"{url}{first['version']}/revert").status_code == 403


def test_a_change_set_of_a_server_shows_its_diff_only_to_who_may_read_servers(api: APIClient) -> None:
    server = VirtualServer.objects.create(slug="ops", name="Ops")
    server.include_tags = ["ops"]
    with authored(of_user(None, "shell")):
        server.save()
    changeset = ChangeSet.objects.latest("id")
    assert changeset.kinds == ["servers"]
    detail = api.get(f"/api/v1/history/{changeset.pk}/").json()
    assert [(c["kind"], c["key"]) for c in detail["changes"]] == [("servers", "ops")]
    assert {"path": "/include_tags/0", "before": None, "after": "ops"} in detail["changes"][0]["diff"]
    withheld = client_for(staff_with("view_changeset")).get(f"/api/v1/history/{changeset.pk}/").json()
    assert (withheld["changes"], withheld["withheld"]) == ([], 1)
