"""Contract of ``ClaimStore`` (mcp_protocol/stores/claims.py), run against memory, Redis, Redis
Cluster and Sentinel.

Two instances made by ``make_claim_store`` stand for two workers (each a worker's event store's
``claims``): a session's standalone GET stream has at most one owner across the cluster ([L]
basic/transports.mdx: a second GET stream of a session gets 409), and a one-time job (a fan-out
change, a part of one) is done by exactly one worker, retaken by another only once the first
one's lease lapsed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from mcp_protocol.session import Session
from mcp_protocol.stores.claims import Claim, ClaimStore
from mcp_protocol.stores.events import EventStore
from tests.support.polling import eventually, within

Make = Callable[..., ClaimStore]


# -- the standalone GET stream of a session ----------------------------------------------------
async def test_second_stream_claim_fails_until_released_by_its_owner(make_claim_store: Make) -> None:
    a, b = make_claim_store(), make_claim_store()
    assert await a.claim_stream("s1", "worker-a", 30) is True
    assert await b.claim_stream("s1", "worker-b", 30) is False
    assert await a.claim_stream("s1", "worker-a", 30) is False
    await b.release_stream("s1", "worker-b")  # not the owner: no effect
    assert await b.claim_stream("s1", "worker-b", 30) is False
    await a.release_stream("s1", "worker-a")
    assert await b.claim_stream("s1", "worker-b", 30) is True
    assert await a.claim_stream("s2", "worker-a", 30) is True  # claims are per session


async def test_a_take_over_claim_wins_and_the_old_owner_loses_its_refresh(make_claim_store: Make) -> None:
    a, b = make_claim_store(), make_claim_store()
    session = Session.create()
    assert await a.claim_stream(session.id, "old", 30) is True
    assert await b.claim_stream(session.id, "new", 30) is False
    assert await b.claim_stream(session.id, "new", 30, take_over=True) is True
    assert await a.refresh_stream(session.id, "old", 30) is False
    await a.release_stream(session.id, "old")  # the old owner leaving frees nothing of the new one
    assert await a.claim_stream(session.id, "third", 30) is False
    assert await b.refresh_stream(session.id, "new", 30) is True


async def test_only_the_owner_refreshes_a_claim(make_claim_store: Make) -> None:
    a, b = make_claim_store(), make_claim_store()
    assert await a.claim_stream("s1", "worker-a", 30) is True
    assert await b.refresh_stream("s1", "worker-b", 30) is False
    assert await a.refresh_stream("s1", "worker-a", 30) is True
    assert await a.refresh_stream("s-unclaimed", "worker-a", 30) is False


async def test_claim_lapses_after_its_ttl_unless_refreshed(make_claim_store: Make) -> None:
    a, b = make_claim_store(), make_claim_store()
    assert await a.claim_stream("kept", "worker-a", 0.4) is True
    assert await a.claim_stream("lapsed", "worker-a", 0.3) is True
    loop = asyncio.get_running_loop()
    end = loop.time() + 1.0
    while loop.time() < end:
        assert await a.refresh_stream("kept", "worker-a", 0.4) is True
        await asyncio.sleep(0.1)
    assert await b.claim_stream("kept", "worker-b", 30) is False
    assert await b.claim_stream("lapsed", "worker-b", 30) is True
    assert await a.refresh_stream("lapsed", "worker-a", 30) is False


async def test_concurrent_claims_give_the_stream_to_exactly_one_owner(make_claim_store: Make) -> None:
    workers = [make_claim_store(), make_claim_store()]
    results = await within(asyncio.gather(
        *(workers[i % 2].claim_stream("s1", f"w{i}", 30) for i in range(10))))
    assert results.count(True) == 1


async def test_open_streams_names_the_sessions_whose_get_stream_is_claimed(make_claim_store: Make) -> None:
    a, b = make_claim_store(), make_claim_store()
    sessions = [Session.create() for _ in range(3)]
    assert await b.open_streams([s.id for s in sessions]) == set()
    assert await a.claim_stream(sessions[0].id, "w1", ttl=30)
    assert await a.claim_stream(sessions[2].id, "w2", ttl=30)
    assert await b.open_streams([s.id for s in sessions]) == {sessions[0].id, sessions[2].id}
    await a.release_stream(sessions[2].id, "w2")
    assert await b.open_streams([s.id for s in sessions]) == {sessions[0].id}
    assert await b.open_streams([]) == set()


async def test_deleting_a_session_from_the_event_store_releases_its_stream_claim(
        make_event_store: Callable[..., EventStore]) -> None:
    events = make_event_store()
    session = Session.create()
    assert await events.claims.claim_stream(session.id, "worker-a", 30) is True
    await events.delete_session(session.id)
    assert await make_event_store().claims.claim_stream(session.id, "worker-b", 30) is True


# -- one-time jobs ------------------------------------------------------------------------------
async def test_claim_once_is_won_by_exactly_one_caller_across_workers(make_claim_store: Make) -> None:
    workers = [make_claim_store(), make_claim_store()]
    results = await within(asyncio.gather(*(workers[i % 2].claim_once("msg-1", 30) for i in range(20))))
    assert results.count(Claim.WON) == 1 and results.count(Claim.HELD) == 19
    assert await workers[0].claim_once("msg-2", 30) is Claim.WON


async def test_a_finished_claim_answers_done_everywhere(make_claim_store: Make) -> None:
    first, second = make_claim_store(), make_claim_store()
    assert await first.claim_once("msg-1", 30) is Claim.WON
    assert await second.claim_once("msg-1", 30) is Claim.HELD
    await first.finish_once("msg-1", 30)
    assert await second.claim_once("msg-1", 30) is Claim.DONE
    assert await first.claim_once("msg-1", 30) is Claim.DONE


async def test_a_claim_never_finished_is_won_again_once_its_lease_lapses(make_claim_store: Make) -> None:
    # The winner's worker died mid-job: the next caller takes the job over.
    store = make_claim_store()
    assert await store.claim_once("msg-1", 0.2) is Claim.WON
    assert await store.claim_once("msg-1", 0.2) is Claim.HELD

    async def claimable() -> bool:
        return await store.claim_once("msg-1", 0.2) is Claim.RETAKEN  # the first winner may have begun

    await eventually(claimable, seconds=3.0, step=0.05)


async def test_a_retaken_job_once_finished_answers_done(make_claim_store: Make) -> None:
    store = make_claim_store()
    assert await store.claim_once("msg-1", 0.1) is Claim.WON

    async def retaken() -> bool:
        return await store.claim_once("msg-1", 0.1) is Claim.RETAKEN

    await eventually(retaken, seconds=3.0, step=0.05)
    await store.finish_once("msg-1", 30)
    assert await store.claim_once("msg-1", 30) is Claim.DONE


async def test_a_renewed_lease_outlives_its_first_lease(make_claim_store: Make) -> None:
    # A slow writer renews its lease: the job is not retaken while it works.
    owner, other = make_claim_store(), make_claim_store()
    assert await owner.claim_once("msg-1", 0.3) is Claim.WON
    for _ in range(6):  # 1.2 s: four times the lease
        await asyncio.sleep(0.2)
        assert await owner.renew_once(["msg-1"], 0.3) == {"msg-1"}
        assert await other.claim_once("msg-1", 0.3) is Claim.HELD
    await owner.finish_once("msg-1", 30)
    assert await other.claim_once("msg-1", 30) is Claim.DONE


async def test_renewing_leaves_finished_lapsed_and_unknown_jobs_alone(make_claim_store: Make) -> None:
    store = make_claim_store()
    assert await store.claim_once("done", 30) is Claim.WON
    await store.finish_once("done", 30)
    assert await store.claim_once("lapsing", 0.1) is Claim.WON
    await asyncio.sleep(0.3)
    assert await store.renew_once(["done", "lapsing", "never"], 0.5) == set()
    await asyncio.sleep(0.6)  # a "done" given the lease would have lapsed by now
    assert await store.claim_once("done", 30) is Claim.DONE
    assert await store.claim_once("lapsing", 30) is Claim.RETAKEN  # not revived by the renewal
    assert await store.claim_once("never", 30) is Claim.WON  # nor created


async def test_a_lease_retaken_by_another_worker_is_not_renewed_by_the_first(
        make_claim_store: Make, backend: str) -> None:
    if backend == "memory":
        pytest.skip("one process: every caller is the same worker")
    first, second = make_claim_store(), make_claim_store()
    assert await first.claim_once("msg-1", 0.1) is Claim.WON

    async def retaken() -> bool:
        return await second.claim_once("msg-1", 30) is Claim.RETAKEN

    await eventually(retaken, seconds=3.0, step=0.05)
    assert await first.renew_once(["msg-1"], 30) == set()  # it must stop: the part is not its own
    assert await second.renew_once(["msg-1"], 30) == {"msg-1"}
