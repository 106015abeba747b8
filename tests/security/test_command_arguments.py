"""Issue 24 item 12: management commands validate their arguments and run the models' own
validation, refusing with a clear ``CommandError`` (nothing deleted, nothing stored): ``prune_audit
--days -1`` deleted every audit record, ``mcp_keys create --rate 10`` stored a rate that is not
``N/S``, ``--expires-days -5`` an expired key; and a key scoped to a tool or prompt that is not
served is refused by the validation the admin, the REST API and the command share."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from access.models import ApiKey, AuditRecord
from registry.models import Tool

pytestmark = pytest.mark.django_db


def audit_rows(*ages_in_days: float) -> None:
    now = timezone.now()
    for age in ages_in_days:
        AuditRecord.objects.create(
            time=now - timedelta(days=age),
            principal="key ab",
            revision="2025-11-25",
            method="tools/call",
            name="echo",
            outcome="ok",
            duration_ms=1.0,
        )


@pytest.mark.parametrize("days", ["-1", "0"])
def test_prune_audit_refuses_a_retention_that_deletes_every_record(days: str) -> None:
    audit_rows(0, 2)
    with pytest.raises(CommandError, match="at least 1"):
        call_command("prune_audit", "--days", days)
    assert AuditRecord.objects.count() == 2
    call_command("prune_audit", "--days", "1")
    assert AuditRecord.objects.count() == 1


def test_prune_audit_refuses_a_setting_that_deletes_every_record(settings: Any) -> None:
    audit_rows(0)
    settings.MCP_AUDIT_RETENTION_DAYS = -3
    with pytest.raises(CommandError, match="MCP_AUDIT_RETENTION_DAYS must be at least 1"):
        call_command("prune_audit")
    assert AuditRecord.objects.count() == 1


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--rate", "10"], "--rate: a rate is N/S"),
        (["--tool-rate", "5"], "--tool-rate: a rate is N/S"),
        (["--rate", "10/0"], "--rate:"),
        (["--expires-days", "-5"], "--expires-days must be more than 0"),
        (["--expires-days", "0"], "--expires-days must be more than 0"),
        (["--tools", "no_such_tool"], "--tools: no tool named 'no_such_tool' is served"),
        (["--prompts", "no_such_prompt"], "--prompts: no prompt named 'no_such_prompt' is served"),
    ],
)
def test_mcp_keys_create_refuses_what_the_admin_refuses(argv: list[str], message: str) -> None:
    with pytest.raises(CommandError, match=message.replace("(", r"\(")):
        call_command("mcp_keys", "create", "bot", *argv)
    assert not ApiKey.objects.exists()


def test_mcp_keys_create_takes_a_served_tool_and_a_written_out_rate() -> None:
    Tool.objects.create(name="echo", kind="template", template_text="{{ message }}")
    call_command("mcp_keys", "create", "bot", "--tools", "echo", "--rate", "10/1", "--expires-days", "1")
    key = ApiKey.objects.get()
    assert key.tools == ["echo"] and key.rate == "10/1" and key.status == "active"


def test_the_api_and_the_admin_refuse_a_key_scoped_to_an_unknown_tool(admin_user: User) -> None:
    api = APIClient()
    api.force_login(admin_user)
    made = api.post("/api/v1/keys/", {"name": "ci", "tools": ["no_such_tool"]}, format="json")
    assert made.status_code == 400 and "no tool named 'no_such_tool'" in made.content.decode()
    rate = api.post("/api/v1/keys/", {"name": "ci", "rate": "10"}, format="json")
    assert rate.status_code == 400 and "N/S" in rate.content.decode()
    admin = Client()
    admin.force_login(admin_user)
    form = {
        "name": "ci",
        "owner": "",
        "expires_at_0": "",
        "expires_at_1": "",
        "tools": json.dumps(["nope"]),
        "resources": '["*"]',
        "prompts": '["*"]',
        "tags": "[]",
        "rate": "",
        "tool_rate": "",
    }
    page = admin.post("/admin/access/apikey/add/", form)
    assert page.status_code == 200 and "no tool named &#x27;nope&#x27;" in page.content.decode()
    assert not ApiKey.objects.exists()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--batch", "0"], "--batch must be at least 1"),
        (["--linger", "-1"], "--linger must be at least 0"),
        (["--claim-after", "-1"], "--claim-after must be at least 0"),
    ],
)
def test_drain_audit_refuses_impossible_numbers(argv: list[str], message: str) -> None:
    with pytest.raises(CommandError, match=message):
        call_command("drain_audit", "--once", *argv)


def test_seed_tools_refuses_a_negative_count_and_an_invalid_name() -> None:
    with pytest.raises(CommandError, match="--count must be 0 or more"):
        call_command("seed_tools", "--count", "-1")
    with pytest.raises(CommandError, match="'bad prefix 0001'"):
        call_command("seed_tools", "--count", "1", "--prefix", "bad prefix ")
    assert not Tool.objects.exists()


def test_ensure_admin_runs_the_user_models_validation(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DJANGO_SUPERUSER_USERNAME", "no spaces allowed!")
    monkeypatch.setenv("DJANGO_SUPERUSER_PASSWORD", "a-long-enough-password")
    with pytest.raises(CommandError, match="admin not created"):
        call_command("ensure_admin")
    assert not User.objects.exists()
