"""Promotion between environments: ``export_registry --at`` (a change set, or a time) exports the
registry as it was, from its history; ``import_registry --dry-run`` says what an import would
change, field by field, and write nothing."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from registry.models import ChangeSet, Prompt, Tool

pytestmark = pytest.mark.django_db(transaction=True)


def command(*argv: str, stdin: str | None = None) -> Any:
    out = io.StringIO()
    call_command(*argv, stdout=out)
    return json.loads(out.getvalue())


def latest_changeset() -> int:
    return ChangeSet.objects.order_by("-id").values_list("id", flat=True)[0]


def test_export_at_a_change_set_is_the_registry_as_it_was_then(tmp_path: Any) -> None:
    a = Tool.objects.create(name="a", description="first", kind="template", template_text="x")
    a.description = "second"
    a.save()
    after_edit = latest_changeset()
    prompt = Prompt.objects.create(name="p", description="d")
    prompt.arguments.create(name="topic")
    a.delete()
    then = command("export_registry", "--at", str(after_edit))
    assert [(t["name"], t["description"]) for t in then["tools"]] == [("a", "second")]
    assert then["prompts"] == []
    now = command("export_registry", "--at", str(latest_changeset()))
    assert now["tools"] == [] and [a["name"] for a in now["prompts"][0]["arguments"]] == ["topic"]
    # The history's present is the registry's, skills included.
    assert now == command("export_registry")


def test_export_at_a_time_takes_the_last_change_set_opened_by_then() -> None:
    Tool.objects.create(name="early", kind="template", template_text="x")
    when = ChangeSet.objects.get().created_at
    Tool.objects.create(name="late", kind="template", template_text="x")
    then = command("export_registry", "--at", when.isoformat())
    assert [t["name"] for t in then["tools"]] == ["early"]
    with pytest.raises(CommandError, match="neither a change set id nor an ISO 8601 time"):
        call_command("export_registry", "--at", "yesterday")


def test_an_import_dry_run_prints_the_diff_it_would_apply_and_writes_nothing(tmp_path: Any) -> None:
    Tool.objects.create(
        name="kept",
        description="old",
        kind="template",
        template_text="x",
        input_schema={"type": "object", "properties": {"a": {"type": "string"}}},
    )
    Tool.objects.create(name="dropped", kind="template", template_text="x")
    document = {
        "tools": [
            {
                "name": "kept",
                "description": "new",
                "kind": "template",
                "template_text": "x",
                "input_schema": {"type": "object", "properties": {"a": {"type": "integer"}}},
            },
            {"name": "added", "kind": "template", "template_text": "y"},
        ]
    }
    path = tmp_path / "registry.json"
    path.write_text(json.dumps(document))
    before = latest_changeset()
    report = command("import_registry", str(path), "--mode", "replace", "--dry-run")
    diff = report["tools"]["diff"]
    assert {"path": "/description", "before": "old", "after": "new"} in diff["kept"]
    assert {"path": "/input_schema/properties/a/type", "before": "string", "after": "integer"} in diff["kept"]
    assert {"path": "/template_text", "before": None, "after": "y"} in diff["added"]
    assert {"path": "/name", "before": "dropped", "after": None} in diff["dropped"]
    assert (
        Tool.objects.get(name="kept").description == "old" and not Tool.objects.filter(name="added").exists()
    )
    assert latest_changeset() == before  # nothing written, not even a change set
