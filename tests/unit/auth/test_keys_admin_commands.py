"""API keys in the database: made in the admin (token shown once, only its digest stored), by
``mcp_keys``, revoked, published on the bus after commit; ``prune_audit``; the key ring's view of
them (``DatabaseKeySource`` + ``KeyRing``)."""

from __future__ import annotations

import asyncio
import io
import re
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from access.audit import prune, prune_approvals
from access.keys import DatabaseKeySource
from access.models import ApiKey, Approval, AuditRecord
from mcp_protocol.auth.keys import ACCESS_CHANNEL, KeyRing, digest
from mcp_protocol.bus.memory import MemoryBus
from registry.models import Tool

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def admin(client: Client) -> Client:
    user = get_user_model().objects.create_superuser("root", "root@example.com", "pw")
    client.force_login(user)
    return client


def test_a_key_made_in_the_admin_is_shown_once_and_stored_as_a_digest(admin: Client) -> None:
    Tool.objects.create(name="echo", kind="template", template_text="{{ message }}")  # a served tool
    form = {"name": "ci", "owner": "", "expires_at_0": "", "expires_at_1": "", "tools": '["echo"]',
            "resources": '["*"]', "prompts": "[]", "tags": "[]", "rate": "", "tool_rate": ""}
    response = admin.post(reverse("admin:access_apikey_add"), form, follow=True)
    assert response.status_code == 200
    shown = re.findall(r"mcp_[0-9a-f]{8}_[A-Za-z0-9_-]{43}", response.content.decode())
    assert len(shown) == 1
    key = ApiKey.objects.get(name="ci")
    assert key.digest == digest(shown[0]) and shown[0] not in str(list(ApiKey.objects.values()))
    assert key.grant().tools == {"echo"} and key.grant().resources is None
    page = admin.get(reverse("admin:access_apikey_change", args=[key.pk])).content.decode()
    assert shown[0] not in page and f"mcp_{key.prefix}_" in page


def test_mcp_keys_creates_lists_and_revokes() -> None:
    for name in ("a", "b"):  # a key names tools the server serves
        Tool.objects.create(name=name, kind="template", template_text="x")
    out, err = io.StringIO(), io.StringIO()
    call_command("mcp_keys", "create", "bot", "--tools", "a,b", "--expires-days", "1", stdout=out, stderr=err)
    token = out.getvalue().strip()
    key = ApiKey.objects.get(name="bot")
    assert key.digest == digest(token) and key.tools == ["a", "b"] and key.expires_at is not None
    listing = io.StringIO()
    call_command("mcp_keys", "list", stdout=listing)
    assert f"mcp_{key.prefix}_" in listing.getvalue() and "active" in listing.getvalue()
    call_command("mcp_keys", "revoke", token, stdout=io.StringIO())
    key.refresh_from_db()
    assert key.status == "revoked"


async def test_audit_rows_written_by_the_sink_read_back_as_recorded() -> None:
    """The sink's multi-row INSERTs (more rows than one statement holds) and the values it builds
    for the backend (time text, the capped JSON text, SQL NULL) read back through the ORM."""
    from asgiref.sync import sync_to_async

    from access.audit import DatabaseAuditSink
    from mcp_protocol.auth.audit import AuditEntry, AuditQueue

    when = 1_790_000_000.123456
    queue = AuditQueue(DatabaseAuditSink(), max_bytes=64)
    queue.record(AuditEntry(when, "key ab", "key:1", "s1", "2025-11-25", "tools/call", "echo",
                            {"text": "héllo", "api_key": "k"}, "ok", "", 1.5))
    queue.record(AuditEntry(when, "key ab", None, None, "2026-07-28", "resources/read", "demo://x",
                            None, "ok", "", 0.25))
    queue.record(AuditEntry(when, "key ab", "key:1", "s1", "2025-11-25", "tools/call", "echo",
                            {"text": "x" * 500}, "tool_error", "boom", 2.0))
    for n in range(200):
        queue.record(AuditEntry(when + n, "p", "key:2", "s2", "v", "tools/call", "bulk", {"n": n},
                                "ok", "", 0.1))
    await queue.close()
    rows = await sync_to_async(lambda: list(AuditRecord.objects.order_by("id")))()
    assert len(rows) == 203
    first, read, big = rows[:3]
    assert abs(first.time.timestamp() - when) < 1e-5
    assert first.arguments == {"text": "héllo", "api_key": "[redacted]"}
    assert (first.principal_id, first.session, first.duration_ms) == ("key:1", "s1", 1.5)
    assert read.arguments is None and read.principal_id == "" and read.session == ""
    nulls = await sync_to_async(lambda: list(AuditRecord.objects.filter(arguments__isnull=True)))()
    assert nulls == [read]  # SQL NULL, not JSON null
    assert set(big.arguments) == {"_truncated"} and big.error == "boom"
    assert [r.arguments["n"] for r in rows[3:]] == list(range(200))
    assert abs(rows[-1].time.timestamp() - (when + 199)) < 1e-5


def test_prune_audit_keeps_the_retention_window() -> None:
    now = timezone.now()
    for age in (2, 100):
        AuditRecord.objects.create(time=now - timedelta(days=age), principal="p", revision="v",
                                   method="tools/call", name="t", outcome="ok", duration_ms=1)
    assert prune(90) == 1
    assert AuditRecord.objects.count() == 1
    out = io.StringIO()
    call_command("prune_audit", "--days", "1", stdout=out)
    assert "Deleted 1" in out.getvalue()


def test_prune_audit_deletes_closed_approvals_past_the_window_and_never_a_pending_one() -> None:
    now = timezone.now()

    def filed(age_days: float, decision: str = "", deadline_in: timedelta = timedelta(minutes=5)) -> Approval:
        created = now - timedelta(days=age_days)
        return Approval.objects.create(tool="drop", arguments={"table": "t"}, arguments_digest="0" * 64,
                                       principal="p", created=created, expires_at=now + deadline_in,
                                       decision=decision)

    old_approved = filed(100, "approved")
    old_expired_unmarked = filed(100, deadline_in=-timedelta(days=99))  # its worker died waiting
    old_still_waiting = filed(100, deadline_in=timedelta(days=1))  # a long timeout: a call waits on it
    recent_denied = filed(2, "denied")
    assert prune_approvals(90) == 2
    left = set(Approval.objects.values_list("pk", flat=True))
    assert left == {old_still_waiting.pk, recent_denied.pk}
    assert not {old_approved.pk, old_expired_unmarked.pk} & left
    out = io.StringIO()
    call_command("prune_audit", "--days", "1", stdout=out)
    assert "0 audit record(s) and 1 closed approval(s)" in out.getvalue()
    assert list(Approval.objects.values_list("pk", flat=True)) == [old_still_waiting.pk]


async def test_the_ring_follows_the_table_through_the_bus() -> None:
    from asgiref.sync import sync_to_async

    bus = MemoryBus()
    changes: list[set[str]] = []
    heard = asyncio.Event()

    def on_change(_id: str, principals: set[str]) -> None:
        changes.append(principals)
        heard.set()

    ring = KeyRing(DatabaseKeySource(), bus, on_change=on_change)
    key, token = await sync_to_async(ApiKey.issue)("ring", tools=["echo"])
    await ring.start()
    try:
        principal = ring.resolve(token)
        assert principal is not None and principal.id == f"key:{key.pk}"
        assert ring.resolve(token + "x") is None

        async def publish_after(update: Any) -> None:
            await sync_to_async(update)()
            await bus.publish(ACCESS_CHANNEL, {"id": "t", "keys": [key.pk]})

        def widen() -> None:
            ApiKey.objects.filter(pk=key.pk).update(tools=["echo", "greet"])

        await publish_after(widen)
        await asyncio.wait_for(heard.wait(), 5)
        heard.clear()
        assert changes == [{f"key:{key.pk}"}]
        assert ring.resolve(token).grant.tools == {"echo", "greet"}  # type: ignore[union-attr]
        await publish_after(lambda: ApiKey.objects.filter(pk=key.pk).update(revoked_at=timezone.now()))
        await asyncio.wait_for(heard.wait(), 5)
        assert ring.resolve(token) is None and changes[-1] == {f"key:{key.pk}"}
        await ring.flush_used()
        assert (await sync_to_async(ApiKey.objects.get)(pk=key.pk)).last_used_at is not None
    finally:
        await ring.close()


async def test_a_key_stops_working_when_its_expiry_passes() -> None:
    from asgiref.sync import sync_to_async

    now = [1_000_000.0]
    key, token = await sync_to_async(ApiKey.issue)("soon", tools=["*"])
    await sync_to_async(ApiKey.objects.filter(pk=key.pk).update)(
        expires_at=timezone.datetime.fromtimestamp(now[0] + 10, tz=timezone.get_current_timezone()))
    ring = KeyRing(DatabaseKeySource(), MemoryBus(), clock=lambda: now[0])
    await ring.reload()
    assert ring.resolve(token) is not None
    now[0] += 10
    assert ring.resolve(token) is None
