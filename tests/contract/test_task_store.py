"""Contract of ``TaskStore`` (mcp_protocol/stores/tasks.py), run against memory, Redis, Redis
Cluster and Sentinel.

Two instances made by ``make_task_store`` stand for two workers sharing the backend: a task
created on one is read, answered, cancelled and claimed on the other (SEP-2663: any worker
answers for any task; "Task Creation": created means found), a task is its principal's only
("Security Implications": another principal learns nothing), and a lapsed lease lets another
worker take the task over.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from mcp_protocol.store_errors import CreateError, TaskLimitReached
from mcp_protocol.stores.tasks import (
    ANY_PRINCIPAL,
    Answered,
    TaskRecord,
    TaskStore,
    new_task_id,
    now_ms,
)
from tests.support.polling import eventually, within

Make = Callable[..., TaskStore]
RESULT = {"content": [], "structuredContent": {"items": []}, "isError": False}  # [] must survive


def task(
    principal: str | None = "alice", *, ttl_ms: int | None = 60_000, owner: str = "w1", lease: int = 30_000
) -> TaskRecord:
    return TaskRecord(
        task_id=new_task_id(),
        principal=principal,
        tool="slow",
        request={"name": "slow", "arguments": {"list": []}},
        created_ms=now_ms(),
        ttl_ms=ttl_ms,
        poll_interval_ms=500,
        owner=owner,
        lease_ms=now_ms() + lease,
    )


async def test_a_created_task_is_found_by_every_worker_with_what_was_stored(make_task_store: Make) -> None:
    a, b = make_task_store(), make_task_store()
    record = task()
    await a.create(record)
    found = await b.get(record.task_id, "alice")
    assert found is not None
    assert (found.task_id, found.status, found.tool, found.request) == (
        record.task_id,
        "working",
        "slow",
        {"name": "slow", "arguments": {"list": []}},
    )
    assert (found.created_ms, found.ttl_ms, found.poll_interval_ms, found.owner) == (
        record.created_ms,
        60_000,
        500,
        "w1",
    )
    with pytest.raises(CreateError):
        await b.create(record)


async def test_ids_are_unguessable_and_another_principal_sees_nothing(make_task_store: Make) -> None:
    store = make_task_store()
    ids = {new_task_id() for _ in range(1000)}
    assert len(ids) == 1000 and all(len(i) >= 32 for i in ids)
    record = task("alice")
    await store.create(record)
    assert await store.get(record.task_id, "mallory") is None
    assert await store.get(record.task_id, None) is None
    assert await store.cancel(record.task_id, "mallory") is None
    assert await store.answer(record.task_id, "mallory", {"k": {"action": "accept"}}) is Answered.UNKNOWN
    assert (await store.list_tasks("mallory"))[0] == []
    assert (await store.get(record.task_id, "alice")).status == "working"  # type: ignore[union-attr]
    assert await store.get("no-such-task", "alice") is None


async def test_finish_by_the_lease_holder_inlines_the_result_once(make_task_store: Make) -> None:
    a, b = make_task_store(), make_task_store()
    record = task()
    await a.create(record)
    assert await b.finish(record.task_id, "w2", "completed", result=RESULT) is False  # not its lease
    assert await a.finish(record.task_id, "w1", "completed", result=RESULT) is True
    assert await a.finish(record.task_id, "w1", "failed", error={"code": -32603, "message": "x"}) is False
    found = await b.get(record.task_id, "alice")
    assert found is not None and found.status == "completed" and found.result == RESULT
    assert found.error is None and found.owner is None and found.updated_ms >= found.created_ms


async def test_a_failed_task_keeps_its_json_rpc_error(make_task_store: Make) -> None:
    store = make_task_store()
    record = task()
    await store.create(record)
    error = {"code": -32603, "message": "boom", "data": {"why": []}}
    assert await store.finish(record.task_id, "w1", "failed", error=error, message="boom")
    found = await store.get(record.task_id, "alice")
    assert found is not None and (found.status, found.error, found.result) == ("failed", error, None)
    assert found.status_message == "boom"


async def test_cancel_is_idempotent_and_a_cancelled_task_never_finishes(make_task_store: Make) -> None:
    a, b = make_task_store(), make_task_store()
    record = task()
    await a.create(record)
    before = await b.cancel(record.task_id, "alice")
    assert before is not None and before.status == "working" and before.owner == "w1"  # who to stop
    again = await b.cancel(record.task_id, "alice")
    assert again is not None and again.status == "cancelled"
    assert await a.finish(record.task_id, "w1", "completed", result=RESULT) is False
    assert await a.renew([record.task_id], "w1", now_ms() + 30_000) == set()  # its run must stop
    found = await a.get(record.task_id, "alice")
    assert found is not None and found.status == "cancelled" and found.result is None


async def test_operators_cancel_and_list_every_principals_tasks(make_task_store: Make) -> None:
    store = make_task_store()
    records = [task("alice"), task("bob"), task(None)]
    for record in records:
        await store.create(record)
    listed, _ = await store.list_tasks(ANY_PRINCIPAL, limit=10)
    assert {r.task_id for r in records} <= {r.task_id for r in listed}
    assert await store.cancel(records[1].task_id, ANY_PRINCIPAL) is not None
    assert (await store.get(records[1].task_id, "bob")).status == "cancelled"  # type: ignore[union-attr]


async def test_a_principals_listing_is_newest_first_and_paged(make_task_store: Make) -> None:
    store = make_task_store()
    mine = []
    for i in range(5):
        record = task("carol")
        record.created_ms += i  # distinct creation times: a defined order
        await store.create(record)
        mine.append(record.task_id)
    await store.create(task("dave"))
    first, cursor = await store.list_tasks("carol", 0, 3)
    assert [r.task_id for r in first] == mine[::-1][:3] and cursor is not None
    rest, end = await store.list_tasks("carol", cursor, 3)
    assert [r.task_id for r in rest] == mine[::-1][3:] and end is None


async def test_input_requests_are_answered_partly_then_fully_from_any_worker(make_task_store: Make) -> None:
    a, b = make_task_store(), make_task_store()
    record = task()
    await a.create(record)
    asked = {
        "name": {
            "method": "elicitation/create",
            "params": {
                "message": "Name?",
                "requestedSchema": {"type": "object", "properties": {}, "required": []},
            },
        },
        "color": {"method": "elicitation/create", "params": {"message": "Color?"}},
    }
    assert await b.park(record.task_id, "w2", asked) is False  # not its lease
    assert await a.park(record.task_id, "w1", asked, "Waiting for input")
    parked = await b.get(record.task_id, "alice")
    assert parked is not None and parked.status == "input_required" and parked.input_requests == asked
    assert parked.owner is None  # nothing runs while it waits
    assert await b.answer(record.task_id, "alice", {"nope": {"action": "accept"}}) is Answered.IGNORED
    assert await b.answer(record.task_id, "alice", {"name": {"action": "accept", "content": {"n": []}}}) is (
        Answered.PENDING
    )
    partial = await a.get(record.task_id, "alice")
    assert partial is not None and partial.status == "input_required"
    assert list(partial.input_requests) == ["color"] and list(partial.answers) == ["name"]
    assert await b.answer(record.task_id, "alice", {"name": {"action": "decline"}}) is Answered.IGNORED
    assert await a.answer(record.task_id, "alice", {"color": {"action": "accept"}}) is Answered.READY
    ready = await b.claim(record.task_id, "w2", now_ms() + 30_000)
    assert ready is not None and ready.owner is None  # free, not taken over from a dead worker
    assert ready.answers == {
        "name": {"action": "accept", "content": {"n": []}},
        "color": {"action": "accept"},
    }
    assert (await a.get(record.task_id, "alice")).status == "working"  # type: ignore[union-attr]


async def test_exactly_one_worker_claims_a_task_whose_lease_lapsed(make_task_store: Make) -> None:
    a, b = make_task_store(), make_task_store()
    record = task(owner="dead", lease=1000)
    await a.create(record)
    assert await a.claim(record.task_id, "w1", now_ms() + 30_000) is None  # the lease still runs
    assert record.task_id not in await b.lapsed()

    async def lapsed() -> bool:
        return record.task_id in await b.lapsed()

    await eventually(lapsed, seconds=3.0, step=0.05)
    claims = await within(
        asyncio.gather(*((a, b)[i % 2].claim(record.task_id, f"w{i}", now_ms() + 30_000) for i in range(10)))
    )
    winners = [c for c in claims if c is not None]
    assert len(winners) == 1 and winners[0].owner == "dead"  # it knows whose run it takes over
    assert record.task_id not in await a.lapsed()


async def test_a_renewed_lease_is_not_taken_over(make_task_store: Make) -> None:
    a, b = make_task_store(), make_task_store()
    record = task(owner="w1", lease=300)
    await a.create(record)
    for _ in range(4):
        await asyncio.sleep(0.15)
        assert await a.renew([record.task_id, "unknown"], "w1", now_ms() + 300) == {record.task_id}
        assert await b.claim(record.task_id, "w2", now_ms() + 30_000) is None
    assert await b.renew([record.task_id], "w2", now_ms() + 300) == set()  # not its lease


async def test_a_task_expires_ttl_after_its_creation(make_task_store: Make) -> None:
    store = make_task_store()
    # 2 s: long enough that a loaded machine (a Cluster client's first slot discovery) does not
    # see it expire before the first read; the expiry itself is waited for, with a deadline.
    short, forever = task(ttl_ms=2_000), task(ttl_ms=None)
    await store.create(short)
    await store.create(forever)
    assert await store.get(short.task_id, "alice") is not None

    async def gone() -> bool:
        return await store.get(short.task_id, "alice") is None

    await eventually(gone, seconds=5.0, step=0.05)
    assert now_ms() >= short.created_ms + 2_000  # not before its ttl
    assert await store.cancel(short.task_id, "alice") is None
    assert short.task_id not in {r.task_id for r in (await store.list_tasks("alice", 0, 100))[0]}
    found = await store.get(forever.task_id, "alice")
    assert found is not None and found.ttl_ms is None


async def test_a_principal_has_at_most_the_cap_of_unfinished_tasks(make_task_store: Make) -> None:
    a, b = make_task_store(max_open_per_principal=2), make_task_store(max_open_per_principal=2)
    first, second, third = task("erin"), task("erin"), task("erin")
    await a.create(first)
    await b.create(second)
    with pytest.raises(TaskLimitReached) as refused:
        await a.create(third)
    assert refused.value.limit == 2
    assert await b.get(third.task_id, "erin") is None  # nothing of it was kept
    await b.create(task("frank"))  # the cap is per principal
    assert await a.finish(first.task_id, "w1", "completed", result=RESULT)
    await b.create(third)  # a finished task no longer counts
    assert await a.cancel(second.task_id, "erin") is not None
    await a.create(task("erin"))  # nor a cancelled one
    with pytest.raises(TaskLimitReached):
        await b.create(task("erin"))


async def test_expired_tasks_leave_the_cap(make_task_store: Make) -> None:
    store = make_task_store(max_open_per_principal=1)
    await store.create(task("gina", ttl_ms=300))
    with pytest.raises(TaskLimitReached):
        await store.create(task("gina"))
    await asyncio.sleep(0.45)
    await store.create(task("gina"))


async def test_finished_tasks_are_bounded_per_principal_oldest_finished_first_never_an_unfinished_one(
    make_task_store: Make,
) -> None:
    # Issue 37 item 7: finished tasks and their results are kept within a bound per principal.
    a, b = make_task_store(max_finished_per_principal=2), make_task_store(max_finished_per_principal=2)
    first, second, third, fourth, running = (task("hana") for _ in range(5))
    other = task("ivan")
    for record in (first, second, third, fourth, running, other):
        await a.create(record)
    assert await a.finish(other.task_id, "w1", "completed", result=RESULT)
    # Finished in another order than created: the bound follows the finishing order.
    assert await b.finish(second.task_id, "w1", "failed", error={"code": -32603, "message": "x"})
    assert await a.finish(first.task_id, "w1", "completed", result=RESULT)
    assert await b.cancel(third.task_id, "hana") is not None
    assert await a.get(second.task_id, "hana") is None  # the oldest finished went first
    assert await b.get(first.task_id, "hana") is not None
    assert await b.finish(fourth.task_id, "w1", "completed", result=RESULT)
    assert await a.get(first.task_id, "hana") is None
    kept = {r.task_id for r in (await b.list_tasks("hana", 0, 100))[0]}
    assert kept == {third.task_id, fourth.task_id, running.task_id}  # never the unfinished one
    assert (await a.get(fourth.task_id, "hana")).result == RESULT  # type: ignore[union-attr]
    assert await b.get(other.task_id, "ivan") is not None  # the bound is per principal
    assert await a.cancel(second.task_id, "hana") is None  # a dropped task is an unknown id


async def test_a_released_lease_is_claimed_at_once_by_another_worker_as_nobodys(
    make_task_store: Make,
) -> None:
    a, b = make_task_store(), make_task_store()
    record = task(owner="w1", lease=30_000)
    await a.create(record)
    assert not await b.release(record.task_id, "w2")  # not its lease
    assert await b.claim(record.task_id, "w2", now_ms() + 30_000) is None
    assert await a.release(record.task_id, "w1")
    assert record.task_id in await b.lapsed()  # lapsed now, not a lease later
    taken = await b.claim(record.task_id, "w2", now_ms() + 30_000)
    assert taken is not None and taken.owner is None  # nobody's run died: it may start afresh
    assert not await a.release(record.task_id, "w1")  # no longer w1's


async def test_the_lease_holder_notes_a_working_tasks_status_message_for_every_worker(
    make_task_store: Make,
) -> None:
    a, b = make_task_store(), make_task_store()
    record = task(owner="w1")
    await a.create(record)
    assert await a.note(record.task_id, "w1", "Gathering sources...") is True
    found = await b.get(record.task_id, "alice")
    assert found is not None and found.status == "working", found
    assert found.status_message == "Gathering sources...", "every worker reads the noted message"
    assert await b.note(record.task_id, "w2", "not mine") is False, "only the lease holder notes"
    assert await a.note("no-such-task", "w1", "x") is False
    assert await a.finish(record.task_id, "w1", "completed", result=RESULT, message="done")
    assert await a.note(record.task_id, "w1", "too late") is False, "a finished task keeps its message"
    done = await b.get(record.task_id, "alice")
    assert done is not None and done.status_message == "done"
