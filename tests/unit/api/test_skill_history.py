"""The history of skills (with their files) and of MCP Apps views (``ui://`` resources), as every
definition's: recorded per change set through the REST API, the admin's real forms and an import;
diffed and reverted through ``/api/v1/history/`` and the admin; exported ``--at``; pruned."""

from __future__ import annotations

import base64
import datetime
import io
import json
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.db import transaction
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from registry.models import ChangeSet, Resource, Skill, SkillFile
from tests.support.admin_client import form_fields

# Real transactions: one request is one change set only when the test is not one transaction.
pytestmark = pytest.mark.django_db(transaction=True)

PNG = bytes(range(200))
SKILL = {
    "path": "acme/refunds",
    "frontmatter": {"name": "refunds", "description": "Process refunds"},
    "body": "\n# Refunds\n",
    "files": [
        {"path": "examples/email.md", "media_type": "text/markdown", "text": "Dear customer,\n"},
        {"path": "assets/logo.png", "media_type": "image/png", "base64": base64.b64encode(PNG).decode()},
    ],
}


@pytest.fixture
def bearer(token: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client


def files_of(skill_id: int) -> dict[str, bytes]:
    return {f.path: f.raw for f in SkillFile.objects.filter(skill_id=skill_id)}


def test_a_skill_edit_through_the_api_is_a_change_set_with_a_diff_of_its_files(bearer: APIClient) -> None:
    skill = bearer.post("/api/v1/skills/", SKILL, format="json").json()
    edited = bearer.patch(
        f"/api/v1/skills/{skill['id']}/",
        {
            "body": "\n# Refunds, edited\n",
            "files": [{"path": "examples/email.md", "media_type": "text/markdown", "text": "Hello,\n"}],
        },
        format="json",
    )
    assert edited.status_code == 200, edited.content
    latest = bearer.get("/api/v1/history/").json()["results"][0]
    assert (latest["source"], latest["actor"], latest["kinds"]) == ("api", "token:tests", ["resources"])
    [change] = bearer.get(f"/api/v1/history/{latest['id']}/").json()["changes"]
    assert (change["kind"], change["id"], change["key"]) == ("skills", skill["id"], "acme/refunds")
    diff = {c["path"]: (c["before"], c["after"]) for c in change["diff"]}
    assert diff["/body"][1].strip() == "# Refunds, edited"
    # Files are kept in path order: assets/logo.png went, examples/email.md moved up and changed.
    assert diff["/files/0/path"] == ("assets/logo.png", "examples/email.md")
    assert diff["/files/1"][1] is None  # one file fewer
    versions = bearer.get(f"/api/v1/history/skills/{skill['id']}/").json()["results"]
    assert [v["type"] for v in versions] == ["changed", "created"]


def test_reverting_a_skill_edit_restores_its_files_binary_included(bearer: APIClient) -> None:
    skill = bearer.post("/api/v1/skills/", SKILL, format="json").json()
    bearer.patch(f"/api/v1/skills/{skill['id']}/", {"files": []}, format="json")
    assert files_of(skill["id"]) == {}
    first = bearer.get(f"/api/v1/history/skills/{skill['id']}/").json()["results"][-1]["version"]
    url = f"/api/v1/history/skills/{skill['id']}/{first}/revert"
    assert bearer.post(url, HTTP_IF_MATCH='"1"').status_code == 412  # it is at version 2
    reverted = bearer.post(url, HTTP_IF_MATCH='"2"')
    assert reverted.status_code == 200, reverted.content
    assert reverted["ETag"] == '"3"' and len(reverted.json()["files"]) == 2
    assert files_of(skill["id"]) == {"assets/logo.png": PNG, "examples/email.md": b"Dear customer,\n"}
    [revert_set] = ChangeSet.objects.filter(note__startswith="revert of skills")
    assert (revert_set.source, revert_set.actor) == ("api", "token:tests")


def test_reverting_a_skill_deletion_restores_it_with_its_files(bearer: APIClient) -> None:
    skill = bearer.post("/api/v1/skills/", SKILL, format="json").json()
    assert bearer.delete(f"/api/v1/skills/{skill['id']}/").status_code == 204
    assert not SkillFile.objects.exists()
    deleted = ChangeSet.objects.order_by("-id").first()
    assert deleted is not None
    restored = bearer.post(f"/api/v1/history/{deleted.pk}/revert")
    assert restored.status_code == 200, restored.content
    assert restored.json()["reverted"] == [{"kind": "skills", "id": skill["id"]}]
    assert Skill.objects.get(pk=skill["id"]).path == "acme/refunds"
    assert files_of(skill["id"]) == {"assets/logo.png": PNG, "examples/email.md": b"Dear customer,\n"}


def test_an_import_of_skills_is_one_change_set_reverted_whole(bearer: APIClient) -> None:
    document = {"skills": [SKILL]}
    assert bearer.post("/api/v1/registry/import", document, format="json").status_code == 200
    changeset = ChangeSet.objects.get(source="import")
    assert Skill.history.filter(changeset=changeset).count() == 1
    assert SkillFile.history.filter(changeset=changeset).count() == 2
    done = bearer.post(f"/api/v1/history/{changeset.pk}/revert")
    assert done.status_code == 200, done.content
    assert not Skill.objects.exists() and not SkillFile.objects.exists()


def test_an_admin_edit_of_a_skill_and_its_inline_files_is_recorded_and_reverted_by_the_button(
    admin_client: Client, admin_user: User
) -> None:
    with transaction.atomic():  # one version of the skill, its file included
        skill = Skill.objects.create(
            path="notes", frontmatter={"name": "notes", "description": "Notes"}, body="b"
        )
        SkillFile.objects.create(skill=skill, path="a.md", text="first")
    url = reverse("admin:registry_skill_change", args=[skill.pk])
    page = admin_client.get(url)
    assert page.status_code == 200
    data: dict[str, Any] = {}
    for key, value in [*form_fields(page.content.decode()), ("_save", "Save")]:
        data.setdefault(key, []).append(value)
    data["files-0-text"] = ["second"]
    data["body"] = ["b, edited"]
    saved = admin_client.post(url, data)
    assert saved.status_code == 302, saved.content.decode()[:2000]
    changeset = ChangeSet.objects.get(source="admin")
    assert changeset.actor == f"user:{admin_user.username}"
    assert SkillFile.history.filter(changeset=changeset).get().text == "second"
    listed = admin_client.get(reverse("admin:registry_changeset_change", args=[changeset.pk]))
    assert listed.status_code == 200 and "/files/0/text" in listed.content.decode()
    history = admin_client.get(reverse("admin:registry_skill_history", args=[skill.pk]))
    assert history.status_code == 200
    assert "<code>/files/0/text</code>" in history.content.decode()
    first = Skill.history.filter(id=skill.pk).earliest().history_id
    reverted = admin_client.post(
        reverse("admin:registry_skill_revert", args=[skill.pk, first]), {"seen_version": "2"}
    )
    assert reverted.status_code == 302
    assert Skill.objects.get(pk=skill.pk).body == "b"
    assert files_of(skill.pk) == {"a.md": b"first"}


def test_export_at_a_change_set_has_the_skills_as_they_were() -> None:
    skill = Skill.objects.create(
        path="notes", frontmatter={"name": "notes", "description": "Notes"}, body="b"
    )
    SkillFile.objects.create(skill=skill, path="logo.png", media_type="image/png", data=PNG, is_binary=True)
    then = ChangeSet.objects.order_by("-id").values_list("id", flat=True)[0]
    skill.body = "later"
    skill.save()
    SkillFile.objects.all().delete()
    out = io.StringIO()
    call_command("export_registry", "--at", str(then), stdout=out)
    [item] = json.loads(out.getvalue())["skills"]
    assert (item["path"], item["body"]) == ("notes", "b")
    assert item["files"] == [
        {"path": "logo.png", "media_type": "image/png", "base64": base64.b64encode(PNG).decode()}
    ]
    now = io.StringIO()
    call_command("export_registry", "--at", str(ChangeSet.objects.order_by("-id")[0].pk), stdout=now)
    current = io.StringIO()
    call_command("export_registry", stdout=current)
    assert json.loads(now.getvalue())["skills"] == json.loads(current.getvalue())["skills"]


def test_prune_history_keeps_only_the_latest_version_of_a_live_skill_and_its_files() -> None:
    skill = Skill.objects.create(
        path="notes", frontmatter={"name": "notes", "description": "Notes"}, body="b"
    )
    kept = SkillFile.objects.create(skill=skill, path="a.md", text="x")
    SkillFile.objects.create(skill=skill, path="gone.md", text="y").delete()
    skill.body = "edited"
    skill.save()
    then = timezone.now() - datetime.timedelta(days=400)
    for model in (Skill, SkillFile):
        model.history.update(history_date=then)
    ChangeSet.objects.update(created_at=then)
    call_command("prune_history", "--days", "30", stdout=io.StringIO())
    assert [(h.body, h.history_type) for h in Skill.history.all()] == [("edited", "~")]
    assert [h.id for h in SkillFile.history.all()] == [kept.pk]


def test_an_app_views_csp_edit_is_recorded_and_reverted(bearer: APIClient) -> None:
    view = Resource.objects.create(
        uri="ui://cards/view",
        name="view",
        mime_type="text/html;profile=mcp-app",
        kind="text",
        text="<p>hi</p>",
        ui_csp={"connectDomains": ["https://api.example.com"]},
    )
    view.ui_csp = {"connectDomains": ["https://other.example.com"]}
    view.ui_permissions = ["camera"]
    view.save()
    versions = bearer.get(f"/api/v1/history/resources/{view.pk}/").json()["results"]
    detail = bearer.get(f"/api/v1/history/resources/{view.pk}/{versions[0]['version']}/").json()
    assert {
        "path": "/ui_csp/connectDomains/0",
        "before": "https://api.example.com",
        "after": "https://other.example.com",
    } in detail["diff"]
    reverted = bearer.post(f"/api/v1/history/resources/{view.pk}/{versions[-1]['version']}/revert")
    assert reverted.status_code == 200, reverted.content
    view.refresh_from_db()
    assert (view.ui_csp, view.ui_permissions) == ({"connectDomains": ["https://api.example.com"]}, [])
