"""``/api/v1/keys/`` and ``/api/v1/audit/`` (``management_api/keys.py``, ``audit.py``): a key's
token is answered once, its grant can be changed, DELETE revokes it; the audit log is read-only and
filtered."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.contrib.auth.models import User
from django.utils import timezone
from rest_framework.test import APIClient

from access.models import ApiKey, AuditRecord
from mcp_protocol.auth.keys import digest
from registry.models import Tool


def served_tools(*names: str) -> None:
    """A key's grant names tools the server serves (issue 24 item 12)."""
    for name in names:
        Tool.objects.create(name=name, kind="template", template_text="x")


def test_a_key_made_through_the_api_answers_its_token_once(api: APIClient, superuser: User) -> None:
    served_tools("echo")
    made = api.post("/api/v1/keys/", {"name": "ci", "owner": "root", "tools": ["echo"]}, format="json")
    assert made.status_code == 201, made.content
    body = made.json()
    token = body["token"]
    assert body["status"] == "active" and body["owner"] == "root" and body["prefix"] in token
    key = ApiKey.objects.get(pk=body["id"])
    assert key.digest == digest(token) and key.owner == superuser
    again = api.get(f"/api/v1/keys/{key.pk}/").json()
    assert "token" not in again and again["tools"] == ["echo"]
    assert token not in api.get("/api/v1/keys/").content.decode()


def test_a_keys_grant_changes_and_delete_revokes(api: APIClient) -> None:
    served_tools("echo", "greet")
    key, _ = ApiKey.issue("k")
    change = {"tools": ["echo", "greet"], "rate": "60/60"}
    changed = api.patch(f"/api/v1/keys/{key.pk}/", change, format="json")
    assert changed.status_code == 200 and changed.json()["tools"] == ["echo", "greet"]
    assert api.patch(f"/api/v1/keys/{key.pk}/", {"rate": "fast"}, format="json").status_code == 400
    assert api.delete(f"/api/v1/keys/{key.pk}/").status_code == 204
    key.refresh_from_db()
    assert key.status == "revoked"
    assert [k["id"] for k in api.get("/api/v1/keys/?status=revoked").json()["results"]] == [key.pk]
    assert api.get("/api/v1/keys/?status=active").json()["results"] == []


def test_the_audit_log_is_read_only_and_filtered(api: APIClient) -> None:
    now = timezone.now()
    for age, outcome in ((1, "ok"), (2, "error"), (30, "ok")):
        AuditRecord.objects.create(time=now - timedelta(days=age), principal="key ab", principal_id="key:1",
                                   session="s", revision="2025-11-25", method="tools/call", name="echo",
                                   arguments={"token": "[redacted]"}, outcome=outcome, duration_ms=1.5)
    rows = api.get("/api/v1/audit/?outcome=ok").json()["results"]
    assert [r["outcome"] for r in rows] == ["ok", "ok"] and rows[0]["time"] > rows[1]["time"]
    since = (now - timedelta(days=5)).isoformat()
    assert len(api.get("/api/v1/audit/", {"since": since}).json()["results"]) == 2
    assert api.post("/api/v1/audit/", {}, format="json").status_code == 405


def test_audit_rows_name_the_server_in_the_api_and_the_admin(api: APIClient, admin_client: Any) -> None:
    for server in ("support", ""):  # a virtual server's call, and /mcp's
        AuditRecord.objects.create(time=timezone.now(), principal="key ab", principal_id="key:1",
                                   revision="2025-11-25", method="tools/call", name="echo", outcome="ok",
                                   duration_ms=1.0, server=server)
    rows = api.get("/api/v1/audit/?server=support").json()["results"]
    assert [r["server"] for r in rows] == ["support"]
    assert sorted(r["server"] for r in api.get("/api/v1/audit/").json()["results"]) == ["", "support"]
    page = admin_client.get("/admin/access/auditrecord/").content.decode()
    assert "/mcp/support" in page and "?server=support" in page  # the column and its filter


def test_anonymous_callers_get_401(db: None) -> None:
    assert APIClient().get("/api/v1/keys/").status_code == 401
    assert APIClient().get("/api/v1/audit/").status_code == 401
