"""Each model says what a change of it touches (issue 36 item 1): its list (``mcp_kind``) and its
resource URIs (``change_uris()``), read by ``signals.py`` for the notification and by the history
writer for the change set, instead of a table in the signals module."""

from __future__ import annotations

import pytest

from registry.models import ChangeSet, Prompt, PromptArgument, Resource, Skill, SkillFile, Tool

pytestmark = pytest.mark.django_db


def test_a_tool_and_a_prompt_touch_their_list_and_no_resource() -> None:
    prompt = Prompt(name="p")
    for row in (Tool(name="t"), prompt, PromptArgument(prompt=prompt, name="a")):
        assert row.change_uris() == []
    assert (Tool.mcp_kind, Prompt.mcp_kind, PromptArgument.mcp_kind) == ("tools", "prompts", "prompts")


def test_a_resource_moved_to_another_uri_touches_both_uris() -> None:
    resource = Resource(uri="file:///c.txt", name="c")
    assert resource.change_uris() == ["file:///c.txt"]
    resource._old_uri = "file:///b.txt"  # remembered before the save (signals.py)
    assert resource.change_uris() == ["file:///c.txt", "file:///b.txt"]
    assert Resource.mcp_kind == "resources"


def test_a_saved_resource_moved_to_another_uri_notes_both_in_its_change_set() -> None:
    resource = Resource.objects.create(uri="file:///a.txt", name="a", text="x")
    resource.uri = "file:///b.txt"
    resource.save()
    assert ChangeSet.objects.order_by("-id").values_list("uris", flat=True)[0] in (
        ["file:///a.txt", "file:///b.txt"],
        ["file:///b.txt", "file:///a.txt"],
    )


def test_a_skill_and_its_files_touch_their_skill_uris() -> None:
    skill = Skill(path="acme/refunds", frontmatter={"name": "refunds", "description": "d"})
    assert skill.change_uris() == ["skill://acme/refunds/SKILL.md"]
    skill._old_path = "acme/old-refunds"
    assert skill.change_uris() == ["skill://acme/refunds/SKILL.md", "skill://acme/old-refunds/SKILL.md"]
    assert SkillFile(skill=skill, path="references/FORMS.md").change_uris() == [
        "skill://acme/refunds/references/FORMS.md"
    ]
    assert (Skill.mcp_kind, SkillFile.mcp_kind) == ("resources", "resources")
