"""Issue 39: renaming a definition carries it in the virtual servers that name it, in the same
transaction and change set, recorded in each server's history like any save."""

from __future__ import annotations

import pytest

from registry.models import ChangeSet, Prompt, Resource, ResourceTemplate, Skill, Tool, VirtualServer

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_renamed_tool_stays_in_the_servers_that_named_it_in_the_same_change_set() -> None:
    tool = Tool.objects.create(name="old", kind="template", template_text="x")
    a = VirtualServer.objects.create(slug="a", name="A", tools=["first", "old", "last"])
    b = VirtualServer.objects.create(slug="b", name="B", tools=["other"])
    tool.name = "new"
    tool.save()
    a.refresh_from_db()
    b.refresh_from_db()
    assert (a.tools, a.version) == (["first", "new", "last"], 2)
    assert (b.tools, b.version) == (["other"], 1)  # not named there: not saved
    server_version, tool_version = a.history.latest(), tool.history.latest()
    assert server_version.changeset_id == tool_version.changeset_id
    assert ChangeSet.objects.get(pk=tool_version.changeset_id).kinds == ["tools", "servers"]


def test_a_rename_onto_a_name_the_server_has_already_keeps_it_once() -> None:
    tool = Tool.objects.create(name="old", kind="template", template_text="x")
    VirtualServer.objects.create(slug="a", name="A", tools=["old", "new"])
    tool.name = "new"
    tool.save()
    assert VirtualServer.objects.get(slug="a").tools == ["new"]


def test_every_kind_is_carried_by_the_name_its_selection_uses() -> None:
    resource = Resource.objects.create(uri="x:old", name="r", text="t")
    template = ResourceTemplate.objects.create(uri_template="x://old/{id}", name="t", text_template="x")
    prompt = Prompt.objects.create(name="old_prompt", description="d")
    skill = Skill.objects.create(path="old-skill", frontmatter={"name": "old-skill", "description": "d"})
    VirtualServer.objects.create(
        slug="a", name="A", resources=["x:old"], resource_templates=["x://old/{id}"],
        prompts=["old_prompt"], skills=["skill://old-skill"],
    )
    resource.uri = "x:new"
    resource.save()
    template.uri_template = "x://new/{id}"
    template.save()
    prompt.name = "new_prompt"
    prompt.save()
    skill.path = "new-skill"
    skill.frontmatter = {"name": "new-skill", "description": "d"}
    skill.save()
    a = VirtualServer.objects.get(slug="a")
    assert (a.resources, a.resource_templates, a.prompts, a.skills) == (
        ["x:new"], ["x://new/{id}"], ["new_prompt"], ["skill://new-skill"])
    assert a.version == 5


def test_an_edit_that_keeps_the_name_and_a_row_saved_without_having_been_read_carry_correctly() -> None:
    tool = Tool.objects.create(name="kept", kind="template", template_text="x")
    VirtualServer.objects.create(slug="a", name="A", tools=["kept"])
    tool.description = "edited"
    tool.save()
    assert VirtualServer.objects.get(slug="a").version == 1
    # Built with its primary key, never read: its old name is read before the save (remembered.py).
    Tool(pk=tool.pk, name="moved", kind="template", template_text="x", version=tool.version,
         created_at=tool.created_at).save()
    assert VirtualServer.objects.get(slug="a").tools == ["moved"]
