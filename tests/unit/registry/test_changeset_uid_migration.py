"""Migration 0022: every change set written before it gets a ``uid`` of its own (the name of its
bus messages and fan-out claims, issue 38 item 6), not one value shared by all, as ``AddField``
with a callable default would give. Run as a deployment runs it: the database migrated to just
before, rows written through that state's models, then ``migrate`` forward."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def executor() -> Iterator[MigrationExecutor]:
    yield MigrationExecutor(connection)
    latest = MigrationExecutor(connection)  # back to the latest state for the tests that follow
    latest.migrate(latest.loader.graph.leaf_nodes())


def test_0022_gives_every_existing_change_set_a_uid_of_its_own(executor: MigrationExecutor) -> None:
    executor.migrate([("registry", "0021_tool_http_signing_scheme")])
    executor.loader.build_graph()
    before = executor.loader.project_state([("registry", "0021_tool_http_signing_scheme")]).apps
    made = [before.get_model("registry", "ChangeSet").objects.create(note=f"old {n}").pk for n in range(3)]

    executor.migrate([("registry", "0022_changeset_uid")])
    executor.loader.build_graph()
    after = executor.loader.project_state([("registry", "0022_changeset_uid")]).apps
    uids = dict(after.get_model("registry", "ChangeSet").objects.values_list("pk", "uid"))
    assert all(uids[pk] is not None for pk in made)
    assert len(set(uids.values())) == len(uids)  # one each, none shared
