"""Diff and revert (``registry/history/versions.py``): a revert is an edit (a new version, If-Match guarded),
a deleted row comes back with its id, a prompt with its children, a change set is undone whole or
not at all."""

from __future__ import annotations

from typing import Any

import pytest

from registry.history import versions
from registry.models import ChangeSet, Prompt, Tool
from registry.transfer.documents import import_document

pytestmark = pytest.mark.django_db(transaction=True)


def tool(name: str = "t", **fields: Any) -> Tool:
    return Tool.objects.create(
        **{"name": name, "description": "d", "kind": "template", "template_text": "x", **fields}
    )


def test_json_fields_are_diffed_key_by_key() -> None:
    row = tool(input_schema={"type": "object", "properties": {"a": {"type": "string"}}})
    row.input_schema = {"type": "object", "properties": {"a": {"type": "integer"}, "b/c": {}}}
    row.description = "new"
    row.save()
    latest = versions.versions(Tool, row.pk).first()
    changes = versions.diff(versions.state(versions.previous(latest)), versions.state(latest))
    assert changes == [
        {"path": "/description", "before": "d", "after": "new"},
        {"path": "/input_schema/properties/a/type", "before": "string", "after": "integer"},
        {"path": "/input_schema/properties/b~1c", "before": None, "after": {}},
    ]


def test_reverting_an_object_is_a_new_version_guarded_by_if_match() -> None:
    row = tool(description="first")
    first = versions.versions(Tool, row.pk).first()
    row.description = "second"
    row.save()
    with pytest.raises(versions.PreconditionFailed):
        versions.revert_object(Tool, row.pk, first.history_id, ['"1"'])  # it is at 2 now
    assert Tool.objects.get(pk=row.pk).description == "second"
    restored = versions.revert_object(Tool, row.pk, first.history_id, ['"2"'])
    assert (restored.description, restored.version) == ("first", 3)
    latest = versions.versions(Tool, row.pk).first()
    assert latest.changeset.note == f"revert of tools {row.pk} to version {first.history_id}"


def test_reverting_a_deletion_restores_the_row_with_its_id() -> None:
    row = tool("gone", annotations={"readOnlyHint": True})
    pk = row.pk
    row.delete()
    deleted = versions.versions(Tool, pk).first()
    assert deleted.history_type == "-"
    before = versions.previous(deleted)
    restored = versions.revert_object(Tool, pk, before.history_id, None)
    assert restored.pk == pk and Tool.objects.get(pk=pk).annotations == {"readOnlyHint": True}


def test_reverting_a_prompt_restores_its_arguments_and_messages() -> None:
    prompt = Prompt.objects.create(name="p", description="d")
    prompt.arguments.create(name="topic", position=0)
    prompt.messages.create(role="user", content={"type": "text", "text": "On {{ topic }}"}, position=0)
    prompt.save()  # the version with its children (what the admin and the API do)
    kept = versions.versions(Prompt, prompt.pk).first()
    prompt.arguments.all().delete()
    prompt.messages.update(content={"type": "text", "text": "changed"})
    prompt.description = "changed"
    prompt.save()
    versions.revert_object(Prompt, prompt.pk, kept.history_id, None)
    prompt.refresh_from_db()
    assert prompt.description == "d"
    assert [a.name for a in prompt.arguments.all()] == ["topic"]
    assert [m.content["text"] for m in prompt.messages.all()] == ["On {{ topic }}"]


def test_reverting_an_import_undoes_every_row_of_it_in_one_go() -> None:
    kept = tool("kept", description="before")
    outcome = import_document(
        {
            "tools": [
                {"name": "kept", "kind": "template", "template_text": "x", "description": "imported"},
                {"name": "new_one", "kind": "template", "template_text": "x"},
            ]
        }
    )
    assert not outcome.errors
    changeset = ChangeSet.objects.get(source="import").pk
    restored = versions.revert_changeset(changeset)
    assert sorted(restored) == sorted(
        [("tools", kept.pk), ("tools", Tool.history.filter(name="new_one").first().id)]
    )
    assert Tool.objects.get(pk=kept.pk).description == "before"
    assert not Tool.objects.filter(name="new_one").exists()


def test_a_change_set_revert_with_a_row_changed_since_writes_nothing_and_says_why() -> None:
    tool("a", description="before")
    tool("b", description="before")
    import_document(
        {
            "tools": [
                {"name": n, "kind": "template", "template_text": "x", "description": "imported"} for n in "ab"
            ]
        }
    )
    changeset = ChangeSet.objects.get(source="import").pk
    later = Tool.objects.get(name="b")
    later.description = "edited after the import"
    later.save()
    with pytest.raises(versions.RevertRefused) as refused:
        versions.revert_changeset(changeset)
    [conflict] = refused.value.conflicts
    assert (conflict.key, conflict.reason.startswith("changed since")) == ("b", True)
    assert Tool.objects.get(name="a").description == "imported"  # nothing written, "a" included
