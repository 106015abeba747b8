"""Skills in the registry (SEP-2640): validation at save, the folder loader (nested folders, a
binary file), the snapshot the core serves them from, the admin's zip upload, and the change a
save publishes (resources/updated for the skill's file URIs)."""

from __future__ import annotations

import base64
import io
import zipfile
from typing import Any

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command

from mcp_protocol.auth.principal import ALL
from mcp_protocol.auth.scopes import view
from registry.changes import publish as changes
from registry.management.commands.load_skills import FIXTURE
from registry.models.skills import Skill, SkillFile
from registry.skills.loading import replace_skill
from registry.snapshot import build_state

pytestmark = pytest.mark.django_db


def md(name: str, description: str = "d", extra: str = "") -> str:
    return f"---\nname: {name}\ndescription: {description}\n{extra}---\n\nBody.\n"


def errors_of(instance: Any) -> dict[str, list[str]]:
    with pytest.raises(ValidationError) as info:
        instance.full_clean()
    return info.value.message_dict


def test_a_name_that_differs_from_its_folder_is_a_field_error() -> None:
    errors = errors_of(Skill(path="acme/refunds", frontmatter={"name": "other", "description": "d"}))
    assert "final path segment" in errors["frontmatter"][0]


@pytest.mark.parametrize("path", ["Refunds", "a/-x", "a/x--y", "a/../b", "a//b", "x" * 65])
def test_bad_skill_paths_are_refused(path: str) -> None:
    name = path.rsplit("/", 1)[-1]
    assert "path" in errors_of(Skill(path=path, frontmatter={"name": name, "description": "d"}))


def test_reserved_metadata_keys_are_refused() -> None:
    skill = Skill(path="s", frontmatter={"name": "s", "description": "d",
                                         "metadata": {"io.modelcontextprotocol/x": 1}})
    assert "reserved" in errors_of(skill)["frontmatter"][0]


@pytest.mark.parametrize("path", ["../x", "a/../../x", "/etc/passwd", "a\\b", "SKILL.md", "a//b"])
def test_a_file_path_escaping_the_skill_is_refused(path: str) -> None:
    skill = Skill.objects.create(path="s", frontmatter={"name": "s", "description": "d"})
    assert "path" in errors_of(SkillFile(skill=skill, path=path, text="x"))


def test_a_skill_over_the_file_limit_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("registry.models.skills.MAX_FILES", 3)
    with pytest.raises(ValidationError, match="at most 3 files"):
        replace_skill("s", md("s"), [("a.txt", b"a"), ("b.txt", b"b"), ("c.txt", b"c")])


def test_a_skill_over_the_size_limit_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("registry.models.skills.MAX_BYTES", 100)
    with pytest.raises(ValidationError, match="16 MiB"):
        replace_skill("s", md("s"), [("big.bin", bytes(200))])


def test_the_fixture_folder_loads_into_the_snapshot_with_nesting_and_binary_content() -> None:
    call_command("load_skills", str(FIXTURE))
    call_command("load_skills", str(FIXTURE))  # idempotent
    snapshot = build_state().snapshot
    assert [s.path for s in snapshot.skills] == [
        "acme/billing/refunds", "git-workflow", "pdf-processing", "pdf-processing/form-filler"
    ]
    index = snapshot.skill_index
    pdf = index.skill("skill://pdf-processing/SKILL.md")
    assert pdf is not None and pdf.frontmatter["metadata"] == {"version": "2.1.0"}
    paths = {f.path for f in pdf.files}
    assert {"assets/logo.png", "form-filler/SKILL.md", "templates/regional/eu-invoice.md"} <= paths
    hit = index.file("skill://pdf-processing/assets/logo.png")
    assert hit is not None
    logo = hit[1].contents("skill://pdf-processing/assets/logo.png")
    assert logo["mimeType"] == "image/png"
    assert base64.b64decode(logo["blob"]) == (FIXTURE / "pdf-processing/assets/logo.png").read_bytes()
    skill_md = index.file("skill://pdf-processing/SKILL.md")
    assert skill_md is not None and skill_md[1].text is not None
    assert skill_md[1].text.startswith("---\nname: pdf-processing\n")
    assert [c["name"] for c in index.directory("skill://pdf-processing/templates") or ()] == [
        "invoice.md", "regional"
    ]
    assert view(snapshot, ALL) is snapshot


@pytest.mark.django_db(transaction=True)  # real commits: changes publish after them
def test_editing_a_skill_publishes_its_uris(monkeypatch: pytest.MonkeyPatch) -> None:
    published: list[dict[str, set[str]]] = []
    monkeypatch.setattr(changes, "publish", lambda kinds, *rest: published.append(kinds))
    skill = Skill.objects.create(path="s", frontmatter={"name": "s", "description": "d"})
    SkillFile.objects.create(skill=skill, path="notes.md", text="n")
    assert published == [{"resources": {"skill://s/SKILL.md"}}, {"resources": {"skill://s/notes.md"}}]
    published.clear()
    skill.path = "team/s"
    skill.save()
    assert published == [{"resources": {"skill://team/s/SKILL.md", "skill://s/SKILL.md"}}]


def test_a_zip_upload_in_the_admin_replaces_the_skill(admin_client: Any) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("zipped/SKILL.md", md("zipped", "From a zip"))
        archive.writestr("zipped/scripts/run.py", "print('hi')\n")
        archive.writestr("zipped/assets/blob.bin", bytes(range(256)))
    buffer.seek(0)
    buffer.name = "zipped.zip"
    response = admin_client.post("/admin/registry/skill/add/", {
        "path": "zipped", "frontmatter": "{}", "body": "", "tags": "[]", "enabled": "on",
        "upload": buffer,
        "files-TOTAL_FORMS": "0", "files-INITIAL_FORMS": "0",
        "files-MIN_NUM_FORMS": "0", "files-MAX_NUM_FORMS": "1000",
    })
    assert response.status_code == 302, response.context and [str(e) for e in response.context["errors"]]
    skill = Skill.objects.get(path="zipped")
    assert skill.frontmatter == {"name": "zipped", "description": "From a zip"}
    files = {f.path: f for f in skill.files.all()}
    assert files["scripts/run.py"].text == "print('hi')\n" and not files["scripts/run.py"].is_binary
    assert files["assets/blob.bin"].is_binary and files["assets/blob.bin"].size == 256
    page = admin_client.get(f"/admin/registry/skill/{skill.pk}/change/").content.decode()
    assert "skill-md-preview" in page and "name: zipped" in page


def test_export_then_import_round_trips_skills_and_changes_nothing() -> None:
    from registry.transfer.documents import export_document, import_document

    call_command("load_skills", str(FIXTURE))
    document = export_document()
    pdf = next(s for s in document["skills"] if s["path"] == "pdf-processing")
    logo = next(f for f in pdf["files"] if f["path"] == "assets/logo.png")
    assert base64.b64decode(logo["base64"]) == (FIXTURE / "pdf-processing/assets/logo.png").read_bytes()
    again = import_document(document, mode="merge")
    assert not again.errors and again.sections["skills"]["unchanged"] == 4 and again.changed == 0
    Skill.objects.all().delete()
    restored = import_document(document, mode="merge")
    assert sorted(restored.sections["skills"]["created"]) == sorted(s["path"] for s in document["skills"])
    assert Skill.objects.get(path="pdf-processing").files.get(path="assets/logo.png").is_binary


def test_import_refuses_bad_skills_with_pointers_and_writes_nothing() -> None:
    from registry.transfer.documents import import_document

    document = {"skills": [
        {"path": "a/wrong", "frontmatter": {"name": "other", "description": "d"}},
        {"path": "ok", "frontmatter": {"name": "ok", "description": "d"},
         "files": [{"path": "../escape.md", "text": "x"}, {"path": "b.bin", "base64": "!!"}]},
    ]}
    outcome = import_document(document, mode="replace")
    paths = {p.path for p in outcome.errors}
    assert {"/skills/0/frontmatter", "/skills/1/files/0/path", "/skills/1/files/1/base64"} <= paths
    assert not Skill.objects.exists()


def test_replace_without_a_skills_section_leaves_skills_alone() -> None:
    from registry.transfer.documents import import_document

    call_command("load_skills", str(FIXTURE))
    assert not import_document({"tools": []}, mode="replace").errors
    assert Skill.objects.count() == 4
    outcome = import_document({"skills": []}, mode="replace")
    assert len(outcome.sections["skills"]["deleted"]) == 4 and not Skill.objects.exists()


def test_a_corrupt_zip_is_a_form_error_not_a_500(admin_client: Any) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("SKILL.md", md("broken") + "x" * 1000)
    data = bytearray(buffer.getvalue())
    start = data.index(b"PK\x03\x04") + 30 + len("SKILL.md")
    data[start + 5 : start + 25] = bytes(20)  # damage the compressed stream
    upload = io.BytesIO(bytes(data))
    upload.name = "broken.zip"
    response = admin_client.post("/admin/registry/skill/add/", {
        "path": "broken", "frontmatter": "{}", "body": "", "tags": "[]", "enabled": "on", "upload": upload,
        "files-TOTAL_FORMS": "0", "files-INITIAL_FORMS": "0",
        "files-MIN_NUM_FORMS": "0", "files-MAX_NUM_FORMS": "1000",
    })
    assert response.status_code == 200 and "upload" in response.context["adminform"].form.errors
    assert not Skill.objects.filter(path="broken").exists()
