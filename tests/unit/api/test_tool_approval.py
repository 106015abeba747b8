"""Issue 42 item 5: a tool's approval policy through the API (edited, exported and imported, kept
in its history), the destructive default it falls back on, what the snapshot serves, and the system
check that refuses a bad default."""

from __future__ import annotations

import pytest
from django.core.checks import run_checks
from rest_framework.test import APIClient

from registry.models import Tool
from registry.snapshot import build_state

from .conftest import TEMPLATE_TOOL


def served_policy(name: str) -> str:
    return next(t.approval for t in build_state().snapshot.tools if t.name == name)


def test_a_tools_approval_is_edited_by_the_api_and_served_to_the_core(api: APIClient) -> None:
    made = api.post("/api/v1/tools/", TEMPLATE_TOOL, format="json")
    assert made.status_code == 201, made.content
    assert made.json()["approval"] == ""
    pk = made.json()["id"]
    changed = api.patch(f"/api/v1/tools/{pk}/", {"approval": "staff"}, format="json")
    assert changed.status_code == 200 and changed.json()["approval"] == "staff"
    assert served_policy("api_tool") == "staff"
    assert api.patch(f"/api/v1/tools/{pk}/", {"approval": "always"}, format="json").status_code == 400
    # Kept in the tool's history like any field: the version before the change has no policy.
    assert sorted(h.approval for h in Tool.history.filter(id=pk)) == ["", "staff"]


@pytest.mark.parametrize(
    ("annotations", "approval", "default", "served"),
    [
        ({"destructiveHint": True}, "", "confirm", "confirm"),
        ({"destructiveHint": True}, "none", "staff", "none"),  # the tool's own policy wins
        ({"destructiveHint": False}, "", "staff", "none"),
        (None, "", "staff", "none"),  # only an explicit destructiveHint: true counts
        ({"destructiveHint": True}, "", "none", "none"),
    ],
)
def test_the_destructive_default_applies_only_to_tools_marked_destructive_without_a_policy(
    db: None, settings, annotations, approval, default, served
) -> None:
    settings.MCP_APPROVAL_DESTRUCTIVE_DEFAULT = default
    Tool.objects.create(name="wipe", kind="template", template_text="x", annotations=annotations,
                        approval=approval)
    assert served_policy("wipe") == served


def test_the_policy_travels_in_the_registry_document(api: APIClient) -> None:
    Tool.objects.create(name="wipe", kind="template", template_text="x", approval="confirm")
    exported = api.get("/api/v1/registry/export").json()
    assert [t["approval"] for t in exported["tools"]] == ["confirm"]
    Tool.objects.all().delete()
    answer = api.post("/api/v1/registry/import", exported, format="json")
    assert answer.status_code == 200, answer.content
    assert Tool.objects.get(name="wipe").approval == "confirm"


def test_a_bad_destructive_default_stops_start_up_naming_the_setting(settings) -> None:
    settings.MCP_APPROVAL_DESTRUCTIVE_DEFAULT = "ask"
    [error] = [m for m in run_checks() if m.id == "registry.E010"]
    assert "MCP_APPROVAL_DESTRUCTIVE_DEFAULT" in error.msg and "'ask'" in error.msg


@pytest.mark.parametrize("policy", ["confirm", "staff"])
def test_the_admins_try_it_runs_a_tool_without_its_policy_and_says_so(db: None, policy: str) -> None:
    from registry.admin.tryit import try_tool

    row = Tool.objects.create(name="wipe", kind="template", template_text="wiped", approval=policy)
    outcome = try_tool(row, {})
    assert outcome.error is None and outcome.result["content"][0]["text"] == "wiped"
    assert f"without its approval policy ({policy})" in (outcome.note or "")


def test_a_staff_wait_that_is_not_positive_stops_start_up(settings) -> None:
    settings.MCP = {"APPROVAL_TIMEOUT_SECONDS": 0}
    [error] = [m for m in run_checks() if m.id == "mcp.E006"]
    assert "APPROVAL_TIMEOUT_SECONDS" in error.msg
