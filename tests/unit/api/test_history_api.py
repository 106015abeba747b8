"""``/api/v1/history/``: change sets and versions listed with cursors, diffs, reverts guarded by
If-Match, a deleted row restored, an import reverted whole or refused with its conflicts."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from rest_framework.test import APIClient

from registry.models import ChangeSet, Tool

from .conftest import TEMPLATE_TOOL

# Real transactions: one request is one change set only when the test is not one transaction.
pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def bearer(token: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client


def created(client: APIClient, **fields: Any) -> dict[str, Any]:
    answer = client.post("/api/v1/tools/", {**TEMPLATE_TOOL, **fields}, format="json")
    assert answer.status_code == 201, answer.content
    return answer.json()


def test_an_api_edit_is_a_change_set_by_its_token_with_a_diff(bearer: APIClient, superuser: User) -> None:
    tool = created(bearer, annotations={"readOnlyHint": False})
    edited = bearer.patch(
        f"/api/v1/tools/{tool['id']}/",
        {"description": "Edited", "annotations": {"readOnlyHint": True}},
        format="json",
    )
    assert edited.status_code == 200
    [latest, first] = bearer.get("/api/v1/history/").json()["results"][:2]
    assert (latest["source"], latest["actor"], latest["kinds"]) == ("api", "token:tests", ["tools"])
    detail = bearer.get(f"/api/v1/history/{latest['id']}/").json()
    [change] = detail["changes"]
    assert (change["kind"], change["id"], change["key"]) == ("tools", tool["id"], "api_tool")
    assert {"path": "/description", "before": "Made through the API", "after": "Edited"} in change["diff"]
    assert {"path": "/annotations/readOnlyHint", "before": False, "after": True} in change["diff"]
    assert ChangeSet.objects.get(pk=first["id"]).user == superuser


def test_versions_are_listed_newest_first_with_cursors(bearer: APIClient) -> None:
    tool = created(bearer)
    for n in range(2):
        bearer.patch(f"/api/v1/tools/{tool['id']}/", {"description": f"edit {n}"}, format="json")
    page = bearer.get(f"/api/v1/history/tools/{tool['id']}/?page_size=2").json()
    assert [v["type"] for v in page["results"]] == ["changed", "changed"]
    rest = bearer.get(page["next"]).json()
    assert [v["type"] for v in rest["results"]] == ["created"] and rest["next"] is None
    newest = page["results"][0]
    detail = bearer.get(f"/api/v1/history/tools/{tool['id']}/{newest['version']}/").json()
    assert detail["diff"] == [{"path": "/description", "before": "edit 0", "after": "edit 1"}]


def test_a_revert_is_a_new_version_and_a_stale_if_match_is_412(bearer: APIClient) -> None:
    tool = created(bearer)
    bearer.patch(f"/api/v1/tools/{tool['id']}/", {"description": "Edited"}, format="json")
    first = bearer.get(f"/api/v1/history/tools/{tool['id']}/").json()["results"][-1]["version"]
    url = f"/api/v1/history/tools/{tool['id']}/{first}/revert"
    stale = bearer.post(url, HTTP_IF_MATCH='"1"')
    assert stale.status_code == 412
    reverted = bearer.post(url, HTTP_IF_MATCH='"2"')
    assert reverted.status_code == 200, reverted.content
    assert reverted["ETag"] == '"3"' and reverted.json()["description"] == "Made through the API"
    [revert_set] = ChangeSet.objects.filter(note__startswith="revert of tools")
    assert (revert_set.source, revert_set.actor) == ("api", "token:tests")


def test_reverting_a_deletion_restores_the_row(bearer: APIClient) -> None:
    tool = created(bearer)
    assert bearer.delete(f"/api/v1/tools/{tool['id']}/").status_code == 204
    [deleted, before] = bearer.get(f"/api/v1/history/tools/{tool['id']}/").json()["results"]
    assert deleted["type"] == "deleted"
    restored = bearer.post(f"/api/v1/history/tools/{tool['id']}/{before['version']}/revert")
    assert restored.status_code == 200, restored.content
    assert bearer.get(f"/api/v1/tools/{tool['id']}/").json()["name"] == "api_tool"


def test_an_import_is_reverted_whole_or_refused_with_its_conflicts(bearer: APIClient) -> None:
    document = {"tools": [{"name": n, "kind": "template", "template_text": "x"} for n in ("one", "two")]}
    assert bearer.post("/api/v1/registry/import", document, format="json").status_code == 200
    changeset = ChangeSet.objects.get(source="import")
    assert changeset.actor == "token:tests"
    two = Tool.objects.get(name="two")
    bearer.patch(f"/api/v1/tools/{two.pk}/", {"description": "edited since"}, format="json")
    refused = bearer.post(f"/api/v1/history/{changeset.pk}/revert")
    assert refused.status_code == 409
    assert [(c["key"], c["reason"][:13]) for c in refused.json()["conflicts"]] == [("two", "changed since")]
    assert Tool.objects.filter(name__in=["one", "two"]).count() == 2  # nothing reverted
    # Reverting the later edit first, then the import, works.
    later = ChangeSet.objects.filter(source="api", kinds=["tools"]).order_by("-id").first()
    assert bearer.post(f"/api/v1/history/{later.pk}/revert").status_code == 200
    done = bearer.post(f"/api/v1/history/{changeset.pk}/revert")
    assert done.status_code == 200, done.content
    assert not Tool.objects.filter(name__in=["one", "two"]).exists()


def test_history_needs_a_staff_user_with_the_permission() -> None:
    assert APIClient().get("/api/v1/history/").status_code in (401, 403)


def test_an_import_dry_run_returns_the_diff_it_would_apply(api: APIClient) -> None:
    Tool.objects.create(name="t", description="old", kind="template", template_text="x")
    document = {"tools": [{"name": "t", "description": "new", "kind": "template", "template_text": "x"}]}
    answer = api.post("/api/v1/registry/import?dry_run=1", document, format="json")
    assert answer.status_code == 200
    assert answer.json()["tools"]["diff"] == {
        "t": [{"path": "/description", "before": "old", "after": "new"}]
    }


def test_the_version_list_names_each_versions_author(bearer: APIClient, superuser: User) -> None:
    tool = created(bearer)
    client = APIClient()
    client.force_login(superuser)
    client.patch(f"/api/v1/tools/{tool['id']}/", {"description": "by a person"}, format="json")
    page = bearer.get(f"/api/v1/history/tools/{tool['id']}/").json()["results"]
    assert [(v["type"], v["actor"], v["source"]) for v in page] == [
        ("changed", f"user:{superuser.username}", "api"),
        ("created", "token:tests", "api"),
    ]
