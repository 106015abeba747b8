"""The baseline migrations: the rows that existed before their history get a first version ("+"),
all in one change set by the system (0015 for tools, resources, templates and prompts; 0020 for
skills and their files), so every live row can be diffed, exported ``--at`` and reverted; and the
data migrations after them (0021: existing http tools keep signing v1; 0022: every change set gets
a ``uid`` of its own). Run as a deployment runs them: the database migrated to just before, rows
written through that state's models, then ``migrate`` forward. One test migrates back from the
latest state once, to 0014, and walks forward through 0015 to 0022: each trip back (and forward
again at teardown) is most of the module's time, so the migrations share one (two trips were
a third of the module's time more)."""

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


def test_the_baselines_0015_and_0020_and_the_data_migrations_0021_and_0022(
    executor: MigrationExecutor,
) -> None:
    """0015 writes nothing on an empty registry and gives every row of before one first version;
    0020 gives skills a first version; 0021 keeps http tools on v1; 0022 gives change sets a uid
    each. One trip back, to 0014, then forward through them all."""
    # 0015 on the empty registry first, then undone (its reverse is a no-op) and applied again
    # over rows written at 0014.
    before = migrated(executor, "0014_historical_http_and_task_fields")
    already = before.get_model("registry", "ChangeSet").objects.count()
    after = migrated(executor, "0015_history_baseline")
    assert after.get_model("registry", "ChangeSet").objects.count() == already, "0015, empty: no change set"
    assert not after.get_model("registry", "HistoricalTool").objects.exists(), "0015, empty: no version"

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
    assert (opened.source, opened.actor) == ("system", "system"), "0015: one change set by the system"
    assert opened.kinds == ["tools", "prompts"], "0015: the change set's kinds"
    [version] = after.get_model("registry", "HistoricalTool").objects.all()
    assert (version.id, version.name, version.description) == (tool.pk, "old_tool", "from before"), (
        "0015: the tool's first version is the row as it was"
    )
    assert (version.history_type, version.changeset_id) == ("+", opened.pk), "0015: the tool's version"
    for name in ("HistoricalPrompt", "HistoricalPromptArgument"):
        [row] = after.get_model("registry", name).objects.all()
        assert (row.history_type, row.changeset_id) == ("+", opened.pk), f"0015: {name}"

    # 0020, 0021 and 0022 on the way forward from 0015: each migration's "before" is the previous
    # one's "after" (0019's rows are what the steps above left, which 0020 to 0022 do not look at).
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
    assert (opened.source, opened.kinds) == ("system", ["resources"]), "0020: one change set by the system"
    [version] = after.get_model("registry", "HistoricalSkill").objects.all()
    assert (version.id, version.path, version.body) == (skill.pk, "team/review", "# Review"), "0020: skill"
    [file_version] = after.get_model("registry", "HistoricalSkillFile").objects.all()
    file_row = (file_version.path, file_version.text, file_version.changeset_id)
    assert file_row == ("notes.md", "n", opened.pk), "0020: the skill's file"

    # Issue 37 item 7: an upstream that verifies v1 today keeps verifying after the deploy.
    before = after  # the state right after 0020, the skill's rows in it
    before.get_model("registry", "Tool").objects.create(
        name="old_signed", description="d", kind="http", http_url="https://api.example.com/x",
        http_signing_secret_env="MCP_TOOL_SECRET_SIGNING")
    after = migrated(executor, "0021_tool_http_signing_scheme")
    old = after.get_model("registry", "Tool").objects.get(name="old_signed")
    assert old.http_signing_scheme == "v1", "0021: an existing http tool keeps signing v1"
    fresh = after.get_model("registry", "Tool").objects.create(
        name="new_signed", description="d", kind="http")
    assert fresh.http_signing_scheme == "v2", "0021: a new http tool signs v2"

    # Migration 0022: every change set written before it gets a ``uid`` of its own (the name of
    # its bus messages and fan-out claims, issue 38 item 6), not one value shared by all, as
    # ``AddField`` with a callable default would give.
    before = after  # the state right after 0021
    made = [before.get_model("registry", "ChangeSet").objects.create(note=f"old {n}").pk for n in range(3)]
    after = migrated(executor, "0022_changeset_uid")
    uids = dict(after.get_model("registry", "ChangeSet").objects.values_list("pk", "uid"))
    assert all(uids[pk] is not None for pk in made), "0022: every old change set gets a uid"
    assert len(set(uids.values())) == len(uids), "0022: one uid each, none shared"
