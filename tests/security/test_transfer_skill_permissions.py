"""Import and export check the skill permissions like the other kinds' (issue 37 item 5): a staff
user who may edit every tool, resource and prompt but no skill neither creates, rewrites nor
deletes skills through ``POST /api/v1/registry/import`` (``mode=replace`` included), nor reads
them, files and all, through ``GET /api/v1/registry/export``."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import Permission, User
from rest_framework.test import APIClient

from registry.models import Skill
from registry.skills.loading import replace_skill

pytestmark = pytest.mark.django_db

KINDS = ("tool", "resource", "resourcetemplate", "prompt")
ACTIONS = ("add", "change", "delete", "view")
SKILL_MD = "---\nname: refunds\ndescription: How refunds are made.\n---\nBody.\n"
NEW_SKILL: dict[str, Any] = {
    "path": "evil/new",
    "frontmatter": {"name": "new", "description": "Planted by an import."},
    "body": "Do what I say.",
    "files": [{"path": "notes.md", "media_type": "text/markdown", "text": "x"}],
}


def staff(name: str, *models: str) -> APIClient:
    user = User.objects.create_user(name, password="pw", is_staff=True)
    codenames = [f"{action}_{model}" for model in models for action in ACTIONS]
    user.user_permissions.set(Permission.objects.filter(content_type__app_label="registry",
                                                        codename__in=codenames))
    client = APIClient()
    client.force_login(user)
    return client


@pytest.fixture
def kept() -> Skill:
    return replace_skill("acme/refunds", SKILL_MD, [("secret.md", b"internal only")])


@pytest.fixture
def no_skills() -> APIClient:
    return staff("kinds-only", *KINDS)


def test_an_import_with_skills_needs_the_skill_permissions(no_skills: APIClient, kept: Skill) -> None:
    rewritten = {"path": kept.path, "frontmatter": {"name": "refunds", "description": "Rewritten."},
                 "body": "Rewritten.", "files": []}
    for document in ({"skills": [NEW_SKILL]}, {"skills": [rewritten]}):
        answer = no_skills.post("/api/v1/registry/import", document, format="json")
        assert answer.status_code == 403, answer.content
    assert list(Skill.objects.values_list("path", flat=True)) == ["acme/refunds"]
    assert Skill.objects.get().body.strip() == "Body."


def test_a_replace_import_cannot_delete_skills_without_their_permission(
    no_skills: APIClient, kept: Skill
) -> None:
    for query in ("?mode=replace", "?mode=replace&dry_run=1"):
        answer = no_skills.post(f"/api/v1/registry/import{query}", {"skills": []}, format="json")
        assert answer.status_code == 403, answer.content
    assert Skill.objects.filter(pk=kept.pk).exists()


def test_a_document_without_skills_needs_no_skill_permission_and_leaves_skills_alone(
    no_skills: APIClient, kept: Skill
) -> None:
    answer = no_skills.post("/api/v1/registry/import?mode=replace", {"tools": []}, format="json")
    assert answer.status_code == 200, answer.content
    assert Skill.objects.filter(pk=kept.pk).exists()


def test_the_export_needs_the_skill_view_permission(no_skills: APIClient, kept: Skill) -> None:
    answer = no_skills.get("/api/v1/registry/export")
    assert answer.status_code == 403 and b"internal only" not in answer.content


def test_a_user_with_the_skill_permissions_imports_and_exports_skills(kept: Skill) -> None:
    client = staff("everything", *KINDS, "skill", "virtualserver", "upstream")  # servers, upstreams too
    exported = client.get("/api/v1/registry/export")
    assert exported.status_code == 200
    assert [s["path"] for s in exported.json()["skills"]] == ["acme/refunds"]
    answer = client.post("/api/v1/registry/import", {"skills": [NEW_SKILL]}, format="json")
    assert answer.status_code == 200 and answer.json()["skills"]["created"] == ["evil/new"]
