"""The staff approval queue as an attacker meets it (docs/security.md "Approvals before risky
calls"): a staff user without ``access.decide_approval`` neither reads the queue (its arguments may
hold secrets) nor decides, in the API and the admin; a second decision, or one after the call
stopped waiting, changes nothing (409); a message forged on the bus does not release a waiting
call, the decision in the database does; the audit row of a decision names who took it and
carries the arguments' digest, never the arguments."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.models import Permission, User
from django.utils import timezone
from rest_framework.test import APIClient

from access import approvals
from access.models import Approval, AuditRecord
from mcp_django.conf import mcp_settings
from mcp_protocol.approvals import APPROVED, ApprovalRequest
from tests.support.polling import eventually, unlocked

SECRET_ARGUMENTS = {"card": "4111111111111111", "amount": 900}


def pending(**extra: object) -> Approval:
    now = timezone.now()
    fields = {
        "tool": "refund",
        "arguments": SECRET_ARGUMENTS,
        "arguments_digest": approvals.arguments_digest(SECRET_ARGUMENTS),
        "principal": "key mcp_ab12",
        "created": now,
        "expires_at": now + timedelta(minutes=5),
        **extra,
    }
    return Approval.objects.create(**fields)


def logged_in(user: User) -> APIClient:
    client = APIClient()
    client.force_login(user)
    return client


def staff(name: str, *codenames: str) -> User:
    user = User.objects.create_user(name, password="pw", is_staff=True)
    user.user_permissions.set(Permission.objects.filter(codename__in=codenames))
    return user


@pytest.mark.django_db
@pytest.mark.parametrize("codenames", [(), ("view_approval",), ("view_approval", "change_approval")])
def test_staff_without_decide_approval_neither_read_the_arguments_nor_decide(codenames) -> None:
    row = pending()
    client = logged_in(staff("clerk", *codenames))
    assert client.get("/api/v1/approvals/").status_code == 403
    assert client.get(f"/api/v1/approvals/{row.pk}/").status_code == 403
    assert client.post(f"/api/v1/approvals/{row.pk}/approve").status_code == 403
    assert client.get("/admin/access/approval/").status_code == 403
    changed = client.post("/admin/access/approval/", {"action": "approve", "_selected_action": [row.pk]})
    assert changed.status_code == 403
    row.refresh_from_db()
    assert row.decision == "" and row.decided_by is None


@pytest.mark.django_db
def test_a_second_decision_is_409_and_the_first_stands() -> None:
    row = pending()
    first, second = staff("ann", "decide_approval"), staff("bob", "decide_approval")
    assert logged_in(first).post(f"/api/v1/approvals/{row.pk}/deny").status_code == 200
    again = logged_in(second).post(f"/api/v1/approvals/{row.pk}/approve")
    assert again.status_code == 409
    row.refresh_from_db()
    assert (row.decision, row.decided_by) == ("denied", first)
    assert AuditRecord.objects.filter(method__startswith="approval/").count() == 1


@pytest.mark.django_db
def test_the_admin_actions_decide_for_staff_with_the_permission_and_skip_decided_rows() -> None:
    waiting, decided = pending(), pending(decision="denied")
    client = logged_in(staff("ann", "decide_approval"))
    assert client.get("/admin/access/approval/").status_code == 200
    done = client.post(
        "/admin/access/approval/", {"action": "approve", "_selected_action": [waiting.pk, decided.pk]}
    )
    assert done.status_code == 302
    waiting.refresh_from_db()
    decided.refresh_from_db()
    assert (waiting.decision, waiting.decided_by.username) == ("approved", "ann")
    assert decided.decision == "denied" and decided.decided_by is None


@pytest.mark.django_db
def test_a_decision_after_the_call_stopped_waiting_is_409() -> None:
    row = pending(expires_at=timezone.now() - timedelta(seconds=1))
    reply = logged_in(staff("ann", "decide_approval")).post(f"/api/v1/approvals/{row.pk}/approve")
    assert reply.status_code == 409
    row.refresh_from_db()
    assert row.decision == "" and row.decided_by is None


@pytest.mark.django_db
def test_the_audit_row_names_who_decided_and_holds_no_argument() -> None:
    row = pending()
    logged_in(staff("ann", "decide_approval")).post(f"/api/v1/approvals/{row.pk}/approve")
    [audit] = AuditRecord.objects.filter(method="approval/approve")
    assert audit.principal == "staff:ann" and audit.name == "refund" and audit.outcome == "approved"
    assert audit.arguments["arguments_digest"] == row.arguments_digest
    assert "4111111111111111" not in str(audit.arguments)


@pytest.mark.django_db(transaction=True)
async def test_a_forged_bus_message_does_not_release_a_waiting_call_the_decision_does() -> None:
    bus = mcp_settings.backend("BUS")
    queue = approvals.DatabaseApprovalQueue(bus)
    request = ApprovalRequest("refund", SECRET_ARGUMENTS, "key mcp_ab12", "key:1", "abcd1234", "")
    waiting = asyncio.create_task(queue.decide(request, timeout=10.0))

    async def filed() -> bool:
        return await sync_to_async(Approval.objects.filter(tool="refund").exists)()

    await eventually(unlocked(filed))
    row = await sync_to_async(Approval.objects.get)(tool="refund")
    await bus.publish(approvals.channel(row.pk), {"decision": APPROVED})  # forged: no row changed
    done, _ = await asyncio.wait({waiting}, timeout=0.3)
    assert not done, "a bus message alone released the call"
    ann = await sync_to_async(staff)("ann", "decide_approval")
    await sync_to_async(approvals.decide)(row.pk, True, ann)
    assert await asyncio.wait_for(waiting, 5) == APPROVED


@pytest.mark.django_db(transaction=True)
async def test_a_call_that_ends_before_a_decision_closes_its_approval_so_none_can_land_after() -> None:
    queue = approvals.DatabaseApprovalQueue(mcp_settings.backend("BUS"))
    request = ApprovalRequest("refund", SECRET_ARGUMENTS, "key mcp_ab12", "key:1", "abcd1234", "")
    waiting = asyncio.create_task(queue.decide(request, timeout=10.0))

    async def filed() -> bool:
        return await sync_to_async(Approval.objects.filter(tool="refund").exists)()

    await eventually(unlocked(filed))
    waiting.cancel()  # the client cancelled the call, or the worker is stopping
    with pytest.raises(asyncio.CancelledError):
        await waiting
    row = await sync_to_async(Approval.objects.get)(tool="refund")
    assert row.decision == "cancelled"
    ann = await sync_to_async(staff)("ann", "decide_approval")
    with pytest.raises(approvals.NotPending):
        await sync_to_async(approvals.decide)(row.pk, True, ann)
    audit = await sync_to_async(AuditRecord.objects.get)(method="approval/cancel")
    assert audit.principal == "caller"
