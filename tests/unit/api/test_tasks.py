"""``/api/v1/tasks/`` and the admin's tasks page (issue 26 "Operators"): every principal's tasks
from the task store (in-memory here; Redis across workers in
``tests/integration/test_tasks_workers.py``), never a whole task id, and a cancel that ends the
task as ``tasks/cancel`` does (the run stopped on its worker through the bus)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from django.conf import settings
from django.test import Client, override_settings

from management_api.tasks import key_of
from mcp_django.conf import mcp_settings
from mcp_protocol.stores.tasks import ANY_PRINCIPAL, TaskRecord, new_task_id, now_ms
from mcp_protocol.tasks.signals import channel
from tests.support.polling import within

from .conftest import client_for, staff_with

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def memory_backends() -> Iterator[None]:
    memory = {
        "TASK_STORE": {"BACKEND": "mcp_protocol.stores.memory.MemoryTaskStore", "OPTIONS": {}},
        "BUS": {"BACKEND": "mcp_protocol.bus.memory.MemoryBus", "OPTIONS": {}},
    }
    with override_settings(MCP={**settings.MCP, **memory}):
        yield


def made(principal: str, status: str = "working") -> TaskRecord:
    record = TaskRecord(
        task_id=new_task_id(), principal=principal, tool="slow_compute", request={}, created_ms=now_ms(),
        ttl_ms=60_000, poll_interval_ms=500, owner="w-elsewhere", lease_ms=now_ms() + 60_000)
    store = mcp_settings.backend("TASK_STORE")
    async_to_sync(store.create)(record)
    if status == "failed":
        async_to_sync(store.finish)(record.task_id, "w-elsewhere", "failed",
                                    error={"code": -32603, "message": "boom"}, message="boom")
    return record


def test_the_listing_shows_every_principals_tasks_without_their_ids() -> None:
    alice, bob = made("alice"), made("bob", "failed")
    response = client_for(staff_with("view_livetask")).get("/api/v1/tasks/")
    assert response.status_code == 200
    rows = {row["key"]: row for row in response.json()["results"]}
    assert set(rows) == {key_of(alice.task_id), key_of(bob.task_id)}
    assert rows[key_of(bob.task_id)]["error"] == {"code": -32603, "message": "boom"}
    assert rows[key_of(alice.task_id)]["running_on"] == "w-elsewhere"
    assert alice.task_id not in response.content.decode() and bob.task_id not in response.content.decode()


def test_cancel_needs_its_permission_and_stops_the_run_through_the_bus() -> None:
    task = made("alice")
    viewer = client_for(staff_with("view_livetask"))
    assert viewer.post(f"/api/v1/tasks/{key_of(task.task_id)}/cancel/").status_code == 403
    canceller = client_for(staff_with("view_livetask", "cancel_livetask"))

    async def cancel_and_hear() -> tuple[Any, dict[str, Any]]:
        subscription = await mcp_settings.backend("BUS").subscribe(channel("w-elsewhere"))
        response = await sync_to_async(canceller.post)(f"/api/v1/tasks/{key_of(task.task_id)}/cancel/")
        heard = await within(anext(aiter(subscription)))
        await subscription.close()
        return response, heard

    response, heard = async_to_sync(cancel_and_hear)()
    assert response.status_code == 200 and response.json()["status"] == "cancelled"
    assert heard == {"cancel": task.task_id}  # to the worker holding the lease: it stops the run
    stored = async_to_sync(mcp_settings.backend("TASK_STORE").get)(task.task_id, ANY_PRINCIPAL)
    assert stored is not None and stored.status == "cancelled"
    assert canceller.post(f"/api/v1/tasks/{'0' * 32}/cancel/").status_code == 404


def test_the_admin_page_lists_tasks_and_cancels_one(admin_client: Client) -> None:
    task = made("carol")
    page = admin_client.get("/admin/management_api/livetask/")
    assert page.status_code == 200 and "slow_compute" in page.content.decode()
    assert task.task_id[:6] in page.content.decode() and task.task_id not in page.content.decode()
    done = admin_client.post("/admin/management_api/livetask/", {"key": key_of(task.task_id)})
    assert done.status_code == 302
    stored = async_to_sync(mcp_settings.backend("TASK_STORE").get)(task.task_id, ANY_PRINCIPAL)
    assert stored is not None and stored.status == "cancelled"
