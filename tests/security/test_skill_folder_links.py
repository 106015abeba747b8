"""``load_skills`` reads only what lies inside its folder (issue 37 item 7): a symbolic link whose
target leaves the folder (a file, a ``SKILL.md``, a whole folder) is skipped and named; a link that
stays inside is read as its target."""

from __future__ import annotations

from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from registry.models import Skill

pytestmark = pytest.mark.django_db


def md(name: str) -> str:
    return f"---\nname: {name}\ndescription: The {name} skill.\n---\nBody of {name}.\n"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    outside = tmp_path / "server"
    (outside / "stolen").mkdir(parents=True)
    (outside / "secret.txt").write_text("SERVER SECRET")
    (outside / "stolen" / "SKILL.md").write_text(md("stolen"))
    (outside / "SKILL.md").write_text(md("planted"))
    root = tmp_path / "skills"
    (root / "team" / "notes").mkdir(parents=True)
    (root / "team" / "SKILL.md").write_text(md("team"))
    (root / "team" / "notes" / "a.md").write_text("kept")
    (root / "team" / "alias.md").symlink_to(root / "team" / "notes" / "a.md")  # stays inside
    (root / "team" / "passwd.txt").symlink_to(outside / "secret.txt")
    (root / "team" / "escape").symlink_to(outside / "stolen", target_is_directory=True)
    (root / "linked").mkdir()
    (root / "linked" / "SKILL.md").symlink_to(outside / "SKILL.md")
    return root


def test_links_leaving_the_folder_are_skipped_and_named(folder: Path) -> None:
    out, err = StringIO(), StringIO()
    call_command("load_skills", str(folder), stdout=out, stderr=err)
    assert list(Skill.objects.values_list("path", flat=True)) == ["team"]
    files = {f.path: f.text for f in Skill.objects.get().files.all()}
    assert files == {"alias.md": "kept", "notes/a.md": "kept"}
    assert "SERVER SECRET" not in str(files)
    for link in ("linked/SKILL.md", "team/escape", "team/passwd.txt"):
        assert f"Skipped {link}: a link to outside" in err.getvalue()
    assert "Loaded 1 skills: team." in out.getvalue()
