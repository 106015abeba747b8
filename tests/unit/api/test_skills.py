"""``/api/v1/skills/``: skills with nested files (text and base64), validated as the admin
validates them, with ETag / If-Match like every definition."""

from __future__ import annotations

import base64

import pytest
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db

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


def test_create_read_and_conditionally_update_a_skill(api: APIClient) -> None:
    created = api.post("/api/v1/skills/", SKILL, format="json")
    assert created.status_code == 201, created.json()
    url = f"/api/v1/skills/{created.json()['id']}/"
    got = api.get(url)
    body = got.json()
    files = {f["path"]: f for f in body["files"]}
    logo = files["assets/logo.png"]
    assert logo["size"] == 200 and logo["digest"].startswith("sha256:")
    assert base64.b64decode(logo["base64"]) == PNG
    assert body["skill_md"].startswith("---\nname: refunds\n")
    etag = got["ETag"]
    changed = api.patch(url, {"body": "changed"}, format="json", HTTP_IF_MATCH=etag)
    assert changed.status_code == 200 and len(changed.json()["files"]) == 2  # files kept
    stale = api.patch(url, {"body": "again"}, format="json", HTTP_IF_MATCH=etag)
    assert stale.status_code == 412


@pytest.mark.parametrize(("change", "field"), [
    ({"path": "acme/other"}, "frontmatter"),  # the name differs from the folder
    ({"files": [{"path": "../x.md", "text": "x"}]}, "files"),
    ({"files": [{"path": "a.bin", "base64": "!!"}]}, "files"),
    ({"frontmatter": {"name": "refunds", "description": "d", "metadata": {"io.modelcontextprotocol/x": 1}}},
     "frontmatter"),
])
def test_bad_skills_are_field_errors(api: APIClient, change: dict[str, object], field: str) -> None:
    response = api.post("/api/v1/skills/", {**SKILL, **change}, format="json")
    assert response.status_code == 400 and field in response.json(), response.json()


def test_a_patch_of_files_takes_the_default_media_type_and_needs_each_path(api: APIClient) -> None:
    created = api.post("/api/v1/skills/", SKILL, format="json")
    url = f"/api/v1/skills/{created.json()['id']}/"
    etag = api.get(url)["ETag"]
    # Nested items of a PATCH are validated partially: no default, no "required" (was a 500).
    files = {"files": [{"path": "notes.md", "text": "n"}]}
    patched = api.patch(url, files, format="json", HTTP_IF_MATCH=etag)
    assert patched.status_code == 200, patched.json()
    assert [(f["path"], f["media_type"]) for f in patched.json()["files"]] == [("notes.md", "text/plain")]
    no_path = api.patch(url, {"files": [{"text": "n"}]}, format="json", HTTP_IF_MATCH=patched["ETag"])
    assert no_path.status_code == 400 and "files" in no_path.json(), no_path.json()
