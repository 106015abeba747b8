"""The baseline migrations: the rows that existed before their history get a first version ("+"),
all in one change set by the system (0015 for tools, resources, templates and prompts; 0020 for
skills and their files), so every live row can be diffed, exported ``--at`` and reverted; and the
data migrations after them (0021: existing http tools keep signing v1; 0022: every change set gets
a ``uid`` of its own). Run as a deployment runs them: the database migrated to just before, rows
written through that state's models, then ``migrate`` forward. A test migrates back from the
latest state once and walks forward through its migrations: each trip back (and forward again at
teardown) takes most of the module's time."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def executor() -> Iterator[MigrationExecutor]:
    yield MigrationExecutor(connection)
    # Back to the latest state for the tests that follow.
    latest = MigrationExecutor(connection)
    latest.migrate(latest.loader.graph.leaf_nodes())


def migrated(executor: MigrationExecutor, name: str) -> Any:
    """The app registry of the project's state right after registry migration ``name``."""
    executor.migrate([("registry", name)])
    executor.loader.build_graph()
    return executor.loader.project_state([("registry", name)]).apps


def test_0015_writes_nothing_on_an_empty_registry_and_gives_every_row_of_before_one_first_version(
    executor: MigrationExecutor,
) -> None:
    # One trip back to 0014 for both cases (each trip from the latest state is most of this
    # module's time): 0015 on the empty registry first, then undone (its reverse is a no-op) and
    # applied again over rows written at 0014.
    before = migrated(executor, "0014_historical_http_and_task_fields")
    already = before.get_model("registry", "ChangeSet").objects.count()
    after = migrated(executor, "0015_history_baseline")
    assert after.get_model("registry", "ChangeSet").objects.count() == already
    assert not after.get_model("registry", "HistoricalTool").objects.exists()

    before = migrated(executor, "0014_historical_http_and_task_fields")
    tool = before.get_model("registry", "Tool").objects.create(
        name="old_tool", description="from before", kind="template", template_text="x"
    )
    prompt = before.get_model("registry", "Prompt").objects.create(name="old_prompt", description="p")
    before.get_model("registry", "PromptArgument").objects.create(prompt=prompt, name="a", position=0)
    assert not before.get_model("registry", "HistoricalTool").objects.exists()
    already_pks = set(before.get_model("registry", "ChangeSet").objects.values_list("pk", flat=True))

    after = migrated(executor, "0015_history_baseline")
    [opened] = after.get_model("registry", "ChangeSet").objects.exclude(pk__in=already_pks)
    assert (opened.source, opened.actor) == ("system", "system")
    assert opened.kinds == ["tools", "prompts"]
    [version] = after.get_model("registry", "HistoricalTool").objects.all()
    assert (version.id, version.name, version.description) == (tool.pk, "old_tool", "from before")
    assert (version.history_type, version.changeset_id) == ("+", opened.pk)
    for name in ("HistoricalPrompt", "HistoricalPromptArgument"):
        [row] = after.get_model("registry", name).objects.all()
        assert (row.history_type, row.changeset_id) == ("+", opened.pk)


def test_0020_gives_skills_a_first_version_0021_keeps_http_tools_on_v1_0022_gives_change_sets_a_uid_each(
    executor: MigrationExecutor,
) -> None:
    # 0020, 0021 and 0022 in one trip back from the latest state (each trip is most of this
    # module's time): each migration's "before" is the previous one's "after".
    before = migrated(executor, "0019_skill_history")
    skill = before.get_model("registry", "Skill").objects.create(
        path="team/review", frontmatter={"name": "review", "description": "Reviews"}, body="# Review"
    )
    before.get_model("registry", "SkillFile").objects.create(
        skill=skill, path="notes.md", media_type="text/markdown", text="n"
    )
    changesets = before.get_model("registry", "ChangeSet")
    already = set(changesets.objects.values_list("pk", flat=True))

    after = migrated(executor, "0020_skill_history_baseline")
    [opened] = after.get_model("registry", "ChangeSet").objects.exclude(pk__in=already)
    assert (opened.source, opened.kinds) == ("system", ["resources"])
    [version] = after.get_model("registry", "HistoricalSkill").objects.all()
    assert (version.id, version.path, version.body) == (skill.pk, "team/review", "# Review")
    [file_version] = after.get_model("registry", "HistoricalSkillFile").objects.all()
    assert (file_version.path, file_version.text, file_version.changeset_id) == ("notes.md", "n", opened.pk)

    # Issue 37 item 7: an upstream that verifies v1 today keeps verifying after the deploy.
    before = after  # the state right after 0020, the skill's rows in it
    before.get_model("registry", "Tool").objects.create(
        name="old_signed", description="d", kind="http", http_url="https://api.example.com/x",
        http_signing_secret_env="MCP_TOOL_SECRET_SIGNING")
    after = migrated(executor, "0021_tool_http_signing_scheme")
    assert after.get_model("registry", "Tool").objects.get(name="old_signed").http_signing_scheme == "v1"
    fresh = after.get_model("registry", "Tool").objects.create(
        name="new_signed", description="d", kind="http")
    assert fresh.http_signing_scheme == "v2"

    # Migration 0022: every change set written before it gets a ``uid`` of its own (the name of
    # its bus messages and fan-out claims, issue 38 item 6), not one value shared by all, as
    # ``AddField`` with a callable default would give.
    before = after  # the state right after 0021
    made = [before.get_model("registry", "ChangeSet").objects.create(note=f"old {n}").pk for n in range(3)]
    after = migrated(executor, "0022_changeset_uid")
    uids = dict(after.get_model("registry", "ChangeSet").objects.values_list("pk", "uid"))
    assert all(uids[pk] is not None for pk in made)
    assert len(set(uids.values())) == len(uids)  # one each, none shared
