"""Export → import → export changes nothing, as the README promises: for the demo and the
conformance registries through the ``export_registry`` / ``import_registry`` commands, and for a
prompt whose arguments and messages were all made at position 0 (the admin's old default), whose
order is the document's but whose position numbers are not (issue 31 item 3)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.management import call_command

from registry.models import Prompt, PromptArgument, PromptMessage
from registry.transfer.fixtures import load_document, read_fixture

pytestmark = pytest.mark.django_db


def export_to(path: Path) -> str:
    call_command("export_registry", "--output", str(path))
    return path.read_text(encoding="utf-8")


def import_from(path: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    capsys.readouterr()
    call_command("import_registry", str(path))
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("fixture", ["demo", "conformance"])
def test_export_import_export_of_a_shipped_registry_changes_nothing(
    fixture: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    load_document(read_fixture(fixture))
    first = export_to(tmp_path / "first.json")
    outcome = import_from(tmp_path / "first.json", capsys)
    assert outcome["changed"] == 0, outcome
    for section in ("tools", "resources", "resource_templates", "prompts"):
        assert outcome[section]["created"] == [] and outcome[section]["updated"] == [], (section, outcome)
    assert export_to(tmp_path / "second.json") == first


def test_a_prompt_whose_children_all_sit_at_position_zero_comes_back_unchanged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prompt = Prompt.objects.create(name="review")
    for name in ("language", "code"):
        PromptArgument.objects.create(prompt=prompt, name=name, position=0)
    for text in ("first", "second"):
        PromptMessage.objects.create(prompt=prompt, position=0, content={"type": "text", "text": text})
    first = export_to(tmp_path / "first.json")
    exported = json.loads(first)["prompts"][0]
    assert [a["name"] for a in exported["arguments"]] == ["language", "code"]
    outcome = import_from(tmp_path / "first.json", capsys)
    assert outcome["prompts"]["updated"] == [] and outcome["changed"] == 0, outcome
    assert export_to(tmp_path / "second.json") == first


def test_a_reordered_argument_list_is_an_update(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    prompt = Prompt.objects.create(name="review")
    for name in ("language", "code"):
        PromptArgument.objects.create(prompt=prompt, name=name, position=0)
    path = tmp_path / "doc.json"
    document = json.loads(export_to(path))
    document["prompts"][0]["arguments"].reverse()
    path.write_text(json.dumps(document), encoding="utf-8")
    assert import_from(path, capsys)["prompts"]["updated"] == ["review"]
    assert list(prompt.arguments.values_list("name", "position")) == [("code", 0), ("language", 1)]
