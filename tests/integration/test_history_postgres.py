"""The registry's history on PostgreSQL, where a transaction's first historical row and its change
set are one INSERT statement and each later row's version rides on its UPDATE
(``registry/models/history.py``): a save with history costs no round trip more than one without, and
records everything it did (who, from where, when, the full state, the change set). Run in a
``manage.py shell`` against a fresh database (skipped without PostgreSQL on 127.0.0.1:5432); the
script prints what it saw as JSON."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.manage import manage
from tests.support.migrated import postgres_copy
from tests.support.postgres import temporary_database

pytestmark = pytest.mark.timeout(180)

SCRIPT = r"""
import json
from django.contrib.auth.models import User
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext, override_settings
from registry.changes.authorship import authored, of_user
from registry.models import ChangeSet, Resource, Tool

admin = User.objects.create_superuser("ada", "ada@example.com", "x")
tool = Tool.objects.create(name="t", kind="template", template_text="x", annotations={"readOnlyHint": True})
seen = {}
for on in (False, True):
    with override_settings(SIMPLE_HISTORY_ENABLED=on), CaptureQueriesContext(connection) as queries:
        with authored(of_user(admin, "admin")), transaction.atomic():
            tool.description = f"history {on}"
            tool.save()
    seen[f"statements_{on}"] = [q["sql"].split()[0] for q in queries.captured_queries]
latest = tool.history.latest()
seen["latest"] = {
    "description": latest.description, "annotations": latest.annotations, "type": latest.history_type,
    "user": latest.history_user_id == admin.pk, "at": latest.history_date is not None,
    "changeset": [
        latest.changeset.source, latest.changeset.actor, latest.changeset.kinds,
        latest.changeset.user_id == admin.pk, latest.changeset_id == ChangeSet.objects.latest("id").pk,
    ],
}
# The first change in a savepoint that rolls back: its change set and its version go with it, and
# the transaction's next change opens another.
other = Tool.objects.create(name="o", kind="template", template_text="x")
before = ChangeSet.objects.count()
with transaction.atomic():
    try:
        with transaction.atomic():
            tool.description = "rolled back"
            tool.save()
            raise RuntimeError
    except RuntimeError:
        tool.refresh_from_db()
    other.description = "kept"
    other.save()
seen["after_rollback"] = {
    "changesets": ChangeSet.objects.count() - before,
    "rolled_back_versions": tool.history.filter(description="rolled back").count(),
    "kept": other.history.latest().changeset_id == ChangeSet.objects.latest("id").pk,
}
# A resource's change set names its URI (added to the row the history's INSERT opened).
res = Resource.objects.create(uri="test://r", name="r", text="x")
seen["resource"] = [res.history.latest().changeset.uris, res.history.latest().changeset.kinds]
for on in (False, True):
    with override_settings(SIMPLE_HISTORY_ENABLED=on), CaptureQueriesContext(connection) as queries:
        with transaction.atomic():
            res.text = f"history {on}"
            res.save()
    seen[f"resource_statements_{on}"] = [q["sql"].split()[0] for q in queries.captured_queries]
seen["resource_edit"] = res.history.latest().changeset.uris
# Once the change set is open, each further row's UPDATE carries its version (WITH updated AS
# (UPDATE …) INSERT …): a prompt saved with its children takes the statements it takes without.
from registry.models.concurrency import VersionConflict
from registry.models import Prompt
prompt = Prompt.objects.create(name="p", description="d")
prompt.arguments.create(name="a", position=0)
prompt.messages.create(role="user", content={"type": "text", "text": "{{ a }}"})
children = [*prompt.arguments.all(), *prompt.messages.all()]
for on in (False, True):
    with override_settings(SIMPLE_HISTORY_ENABLED=on), CaptureQueriesContext(connection) as queries:
        with authored(of_user(admin, "admin")), transaction.atomic():
            prompt.description = f"history {on}"
            prompt.save()
            for child in children:
                child.save()
    seen[f"prompt_statements_{on}"] = [q["sql"].split()[0] for q in queries.captured_queries]
argument, message = children
versions = [prompt.history.latest(), argument.history.latest(), message.history.latest()]
seen["prompt_versions"] = [
    [v.history_type, v.history_user_id == admin.pk, v.changeset_id == versions[0].changeset_id]
    for v in versions
]
seen["message_content"] = versions[2].content
# A stale copy saved after the change set opened: refused, and no version of it is written.
stale = Tool.objects.get(pk=other.pk)
Tool.objects.get(pk=other.pk).save()
before = other.history.count()
with transaction.atomic():
    tool.save()
    try:
        stale.save()
        seen["stale"] = "saved"
    except VersionConflict:
        seen["stale"] = "refused"
seen["stale_versions"] = other.history.count() - before
# A child deleted meanwhile: its save inserts it again, recorded as a creation.
gone = prompt.arguments.get()
prompt.arguments.all().delete()
with transaction.atomic():
    prompt.save()
    gone.save()
seen["reinserted"] = gone.history.latest().history_type
print("RESULT" + json.dumps(seen))
"""


@pytest.fixture(scope="module")
def seen() -> Iterator[dict[str, Any]]:
    with temporary_database("mcpsite_history") as url:
        env = {"DATABASE_URL": url, "REDIS_URL": "", "MCP_PROVIDER": "registry.provider.RegistryProvider"}
        postgres_copy(url)
        out = manage(env, "shell", "-c", SCRIPT)
        yield json.loads(out.split("RESULT", 1)[1])


# After the commit, the publish reads the enabled virtual servers once per transaction: the
# endpoints the change reaches (registry/changes/reach.py, issue 39).
SERVERS = "SELECT"


def test_a_save_with_history_takes_as_many_statements_as_one_without(seen: dict[str, Any]) -> None:
    assert seen["statements_False"] == ["BEGIN", "UPDATE", "INSERT", "COMMIT", SERVERS]
    assert seen["statements_True"] == ["BEGIN", "UPDATE", "WITH", "COMMIT", SERVERS]


def test_the_version_written_with_its_change_set_records_who_where_when_and_the_full_state(
    seen: dict[str, Any],
) -> None:
    assert seen["latest"] == {
        "description": "history True",
        "annotations": {"readOnlyHint": True},
        "type": "~",
        "user": True,
        "at": True,
        "changeset": ["admin", "user:ada", ["tools"], True, True],
    }


def test_a_rolled_back_first_change_takes_its_change_set_along_and_the_next_opens_another(
    seen: dict[str, Any],
) -> None:
    assert seen["after_rollback"] == {"changesets": 1, "rolled_back_versions": 0, "kept": True}


def test_a_resource_change_set_names_its_uri_in_the_same_statements(seen: dict[str, Any]) -> None:
    assert seen["resource"] == [["test://r"], ["resources"]]
    assert seen["resource_edit"] == ["test://r"]
    # The SELECT reads the URI before the save (a moved resource notifies both URIs).
    assert seen["resource_statements_False"] == ["BEGIN", "SELECT", "UPDATE", "INSERT", "COMMIT", SERVERS]
    assert seen["resource_statements_True"] == ["BEGIN", "SELECT", "UPDATE", "WITH", "COMMIT", SERVERS]


def test_a_prompt_saved_with_its_children_takes_as_many_statements_as_without_history(
    seen: dict[str, Any],
) -> None:
    without = ["BEGIN", "UPDATE", "INSERT", "UPDATE", "UPDATE", "COMMIT", SERVERS]
    assert seen["prompt_statements_False"] == without
    assert seen["prompt_statements_True"] == ["BEGIN", "UPDATE", "WITH", "WITH", "WITH", "COMMIT", SERVERS]
    # Each child's version: an update, by the admin, in the prompt's change set.
    assert seen["prompt_versions"] == [["~", True, True]] * 3
    assert seen["message_content"] == {"type": "text", "text": "{{ a }}"}


def test_a_refused_stale_save_and_a_reinserted_child_are_recorded_as_what_happened(
    seen: dict[str, Any],
) -> None:
    assert (seen["stale"], seen["stale_versions"]) == ("refused", 0)
    assert seen["reinserted"] == "+"
