"""Issue 24 item 12: the audit log keeps only a session id's first characters (the id is its
client's credential; docs/guides/auth.md promises it is never shown whole). A real server records a tool
call; ``/api/v1/audit/``, the admin's audit list and an audit record's page show the prefix and
never the whole id."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from mcp_protocol.session import SHOWN_PREFIX
from tests.support.live_server import REGISTRY_PROVIDER, LiveServer
from tests.support.mcp_http import POST_HEADERS, initialize_message, notification, request, session_headers

PASSWORD = "audit-reader-password"
MAKE_ADMIN = f"""
from django.contrib.auth.models import User
User.objects.create_superuser("auditor", "a@example.com", {PASSWORD!r})
"""


@pytest.fixture(scope="module")
def live() -> Iterator[LiveServer]:
    server = LiveServer(provider=REGISTRY_PROVIDER, env={"MCP_AUDIT_SINK": "database"},
                        load=[["load_demo"], ["shell", "-c", MAKE_ADMIN]])
    server.start()
    try:
        yield server
    finally:
        server.stop()


def call_echo(live: LiveServer) -> str:
    with httpx.Client(timeout=30) as client:
        opened = client.post(live.url, headers=POST_HEADERS, json=initialize_message())
        session = opened.headers["mcp-session-id"]
        initialized = notification("notifications/initialized")
        client.post(live.url, headers=session_headers(session), json=initialized)
        called = client.post(live.url, headers=session_headers(session), json=request(
            1, "tools/call", {"name": "echo", "arguments": {"message": "audited"}}))
        assert called.status_code == 200, called.text
    return session


def audit_rows(live: LiveServer, token: str) -> tuple[list[dict[str, Any]], str]:
    """The audit log through the REST API once the call's row is written (the sink flushes every
    half second), with the raw body."""
    deadline = time.monotonic() + 15
    while True:
        answer = httpx.get(f"{live.base_url}/api/v1/audit/?name=echo",
                           headers={"Authorization": f"Bearer {token}"}, timeout=10)
        assert answer.status_code == 200, answer.text
        rows = answer.json()["results"]
        if rows or time.monotonic() > deadline:
            return rows, answer.text
        time.sleep(0.1)


def admin_session(live: LiveServer) -> httpx.Client:
    client = httpx.Client(base_url=live.base_url, timeout=10)
    login = client.get("/admin/login/")
    csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', login.text)
    assert csrf is not None
    done = client.post("/admin/login/?next=/admin/", data={
        "username": "auditor", "password": PASSWORD, "csrfmiddlewaretoken": csrf.group(1)})
    assert done.status_code == 302, done.text
    return client


def test_every_audit_surface_shows_only_the_session_ids_prefix(live: LiveServer) -> None:
    session = call_echo(live)
    token = live.manage("create_management_token", "--user", "auditor", "--name", "audit-test").strip()
    rows, body = audit_rows(live, token)
    assert len(rows) == 1, body
    assert rows[0]["session"] == session[:SHOWN_PREFIX]
    assert session not in body
    # A whole id (from a client's log) finds the record; so does the prefix the log shows.
    for wanted in (session, session[:SHOWN_PREFIX]):
        found = httpx.get(f"{live.base_url}/api/v1/audit/", params={"session": wanted},
                          headers={"Authorization": f"Bearer {token}"}, timeout=10)
        assert [row["id"] for row in found.json()["results"]] == [rows[0]["id"]], found.text
    admin = admin_session(live)
    try:
        listing = admin.get("/admin/access/auditrecord/")
        detail = admin.get(f"/admin/access/auditrecord/{rows[0]['id']}/change/")
    finally:
        admin.close()
    for page in (listing, detail):
        assert page.status_code == 200
        assert session[:SHOWN_PREFIX] in page.text
        assert session not in page.text
