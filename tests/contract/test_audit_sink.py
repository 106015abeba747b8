"""The ``AuditSink`` contract, on both sinks: what the audit queue hands a sink reads back from
``AuditRecord`` as recorded (values, SQL NULLs, redaction, capping, batches larger than one
statement). The Redis spool (``access/spool.py``) is read back after its drain (``access/drain.py``)
ran once, on the real Redis under a prefix of the test's own; plus the spool's own promises: its
cap drops and counts the newest entries, a redelivered entry is stored once, the backlog is
reported and trimmed."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from asgiref.sync import sync_to_async

from access.audit import DatabaseAuditSink
from access.drain import GROUP, Drain
from access.models import AuditRecord
from access.spool import RedisSpoolSink, SpoolKeys
from mcp_protocol.auth.audit import AuditEntry, AuditQueue, AuditSink
from tests.support.private_redis import have_redis_server
from tests.support.redis_topologies import PrivateCluster
from tests.support.shared_redis import REDIS_URL, redis_prefix

pytestmark = pytest.mark.django_db(transaction=True)
WHEN = 1_790_000_000.123456


@pytest.fixture
def prefix() -> Iterator[str]:
    with redis_prefix() as name:
        yield name


@pytest.fixture(params=["database", "redis"])
async def sink_and_land(request: pytest.FixtureRequest, prefix: str
                        ) -> AsyncIterator[tuple[AuditSink, Callable[[], Any]]]:
    """A sink and what makes its entries readable (nothing, or a drain run once)."""
    if request.param == "database":
        yield DatabaseAuditSink(), lambda: None
        return
    sink = RedisSpoolSink(url=REDIS_URL, prefix=prefix)
    yield sink, lambda: Drain(url=REDIS_URL, prefix=prefix, block=0.1).run(once=True)


def entry(n: int = 0, **fields: Any) -> AuditEntry:
    values: dict[str, Any] = dict(time=WHEN + n, principal="p", principal_id="key:2", session="s2",
                                  revision="v", method="tools/call", name="bulk", arguments={"n": n},
                                  outcome="ok", error="", duration_ms=0.1)
    return AuditEntry(**{**values, **fields})


async def rows() -> list[AuditRecord]:
    return await sync_to_async(lambda: list(AuditRecord.objects.order_by("time", "id")))()


async def test_what_the_queue_hands_a_sink_reads_back_as_recorded(
        sink_and_land: tuple[AuditSink, Callable[[], Any]]) -> None:
    sink, land = sink_and_land
    queue = AuditQueue(sink, max_bytes=64)
    queue.record(entry(0, principal="key ab", principal_id="key:1", session="s1", revision="2025-11-25",
                       name="echo", arguments={"text": "héllo", "api_key": "k"}, duration_ms=1.5,
                       server="support"))
    queue.record(entry(1, principal_id=None, session=None, method="resources/read", name="demo://x",
                       arguments=None, duration_ms=0.25))
    queue.record(entry(2, arguments={"text": "x" * 500}, outcome="tool_error", error="boom"))
    for n in range(3, 203):
        queue.record(entry(n))
    await queue.close()
    await sync_to_async(land)()
    found = await rows()
    assert len(found) == 203 and queue.dropped == 0
    first, read, big = found[:3]
    assert abs(first.time.timestamp() - WHEN) < 1e-5
    assert first.arguments == {"text": "héllo", "api_key": "[redacted]"}
    assert (first.principal, first.principal_id, first.session, first.revision, first.duration_ms) == (
        "key ab", "key:1", "s1", "2025-11-25", 1.5)
    assert (first.server, read.server) == ("support", "")  # the virtual server called; "" for /mcp
    assert read.arguments is None and read.principal_id == "" and read.session == ""
    nulls = await sync_to_async(lambda: list(AuditRecord.objects.filter(arguments__isnull=True)))()
    assert nulls == [read]  # SQL NULL, not JSON null
    assert set(big.arguments) == {"_truncated"} and (big.outcome, big.error) == ("tool_error", "boom")
    assert [r.arguments["n"] for r in found[3:]] == list(range(3, 203))


async def test_the_spool_drops_and_counts_the_newest_entries_beyond_its_cap(prefix: str) -> None:
    sink = RedisSpoolSink(url=REDIS_URL, prefix=prefix, max_entries=5)
    dropped: list[tuple[str, int]] = []
    queue = AuditQueue(sink)
    queue.on_drop = lambda reason, count: dropped.append((reason, count))
    for n in range(8):
        queue.record(entry(n))
    await queue.close()
    assert queue.dropped == 3 and queue.dropped_by == {"sink_full": 3} and dropped == [("sink_full", 3)]
    status = await RedisSpoolSink(url=REDIS_URL, prefix=prefix).status()
    assert status == {"spool_entries": 5.0, "spool_pending": 0.0, "spool_drain_alive": 0.0}
    totals = await sync_to_async(Drain(url=REDIS_URL, prefix=prefix, block=0.1).run)(once=True)
    assert totals.written == 5
    assert [r.arguments["n"] for r in await rows()] == [0, 1, 2, 3, 4]  # the oldest kept
    # Drained and trimmed: room again, and the drain was seen.
    after = await sink.status()
    assert after == {"spool_entries": 0.0, "spool_pending": 0.0, "spool_drain_alive": 1.0}
    await sink.close()


async def test_an_entry_delivered_twice_is_stored_once(prefix: str) -> None:
    """A drain that committed and died before its ack: another takes the entries over (claim)
    and writes them again; the spool ids skip them."""
    sink = RedisSpoolSink(url=REDIS_URL, prefix=prefix)
    queue = AuditQueue(sink)
    for n in range(10):
        queue.record(entry(n))
    await queue.close()

    class Died(Exception):
        pass

    def die(count: int) -> None:
        raise Died

    first = Drain(url=REDIS_URL, prefix=prefix, batch=4, consumer="first", after_commit=die)
    first.ensure_group()
    with pytest.raises(Died):
        await sync_to_async(first.step)(block=False)
    assert len(await rows()) == 4  # committed, never acknowledged
    second = Drain(url=REDIS_URL, prefix=prefix, block=0.1, claim_after=0, consumer="second")
    totals = await sync_to_async(second.run)(once=True)
    assert totals.claimed == 4 and totals.written == 10  # 4 again (skipped) + the 6 unread
    assert [r.arguments["n"] for r in await rows()] == list(range(10))
    client = redis.Redis.from_url(REDIS_URL)
    try:
        assert client.xpending(second.keys.stream, GROUP)["pending"] == 0
        assert client.xlen(second.keys.stream) == 0
    finally:
        client.close()


async def test_a_drain_forgets_ended_drains_that_hold_nothing(prefix: str) -> None:
    queue = AuditQueue(RedisSpoolSink(url=REDIS_URL, prefix=prefix))
    queue.record(entry(0))
    await queue.close()
    holder = Drain(url=REDIS_URL, prefix=prefix, consumer="holder", after_commit=lambda n: 1 / 0)
    holder.ensure_group()
    with pytest.raises(ZeroDivisionError):
        await sync_to_async(holder.step)(block=False)  # read one entry, never acknowledged
    Drain(url=REDIS_URL, prefix=prefix, consumer="ended").ensure_group()
    live = Drain(url=REDIS_URL, prefix=prefix, consumer="live")
    live.ensure_group()
    assert await sync_to_async(live.forget_ended_drains)(0) == 1
    client = redis.Redis.from_url(REDIS_URL, decode_responses=True)
    try:
        names = {c["name"] for c in client.xinfo_consumers(live.keys.stream, GROUP)}
    finally:
        client.close()
    assert names == {"holder", "live"}  # "holder" still holds its entry


async def test_the_spool_appends_with_eval_when_redis_lacks_the_script(
        prefix: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A Redis restarted since the script was loaded answers NOSCRIPT: the batch goes again as EVAL
    (here a digest Redis never saw stands for the lost script)."""
    monkeypatch.setattr("access.spool.APPEND_SHA", "0" * 40)
    queue = AuditQueue(RedisSpoolSink(url=REDIS_URL, prefix=prefix))
    for n in range(3):
        queue.record(entry(n))
    await queue.close()
    assert queue.dropped == 0
    totals = await sync_to_async(Drain(url=REDIS_URL, prefix=prefix, block=0.1).run)(once=True)
    assert totals.written == 3 and [r.arguments["n"] for r in await rows()] == [0, 1, 2]


async def test_an_argument_with_a_lone_surrogate_loses_no_entry_of_its_batch(prefix: str) -> None:
    """JSON's "\\ud800" decodes to a lone surrogate, which has no UTF-8: written back as that escape
    (the same JSON value), not failing the batch it came in."""
    sink = RedisSpoolSink(url=REDIS_URL, prefix=prefix)
    queue = AuditQueue(sink)
    queue.record(entry(0, arguments={"text": "\ud800 x"}))
    queue.record(entry(1))
    await queue.close()
    assert queue.dropped == 0
    client = redis.Redis.from_url(REDIS_URL, decode_responses=True)
    try:
        stored = [fields for _, fields in client.xrange(sink.keys.stream)]
    finally:
        client.close()
    assert [json.loads(f["a"]) for f in stored] == [{"text": "\ud800 x"}, {"n": 1}]
    assert [json.loads(f["h"])[1] for f in stored] == [WHEN, WHEN + 1]


GOOD_HEAD = ["x-1", WHEN, "p", "key:2", "s2", "v", "tools/call", "bulk", "ok", "", 0.1]
NOT_OURS: dict[str, dict[str, str]] = {
    "no h": {"other": "field"},
    "h not JSON": {"h": "not json", "a": ""},
    "a list SQLite cannot bind": {"h": json.dumps([*GOOD_HEAD[:2], ["a", "list"], *GOOD_HEAD[3:]]), "a": ""},
    "an object": {"h": json.dumps([*GOOD_HEAD[:2], {"an": "object"}, *GOOD_HEAD[3:]]), "a": ""},
    "a number for a text": {"h": json.dumps([*GOOD_HEAD[:2], 5, *GOOD_HEAD[3:]]), "a": ""},
    "NaN": {"h": json.dumps([*GOOD_HEAD[:10], float("nan")]), "a": ""},
    "a time no datetime holds": {"h": json.dumps([GOOD_HEAD[0], 1e300, *GOOD_HEAD[2:]]), "a": ""},
    "too short": {"h": json.dumps(GOOD_HEAD[:5]), "a": ""},
    "a string of eleven": {"h": json.dumps("eleven char"), "a": ""},
    "two values": {"h": json.dumps(GOOD_HEAD) + "," + json.dumps(GOOD_HEAD), "a": ""},
}


@pytest.mark.parametrize("fields", NOT_OURS.values(), ids=NOT_OURS.keys())
async def test_an_entry_that_is_not_ours_is_acknowledged_logged_and_loses_no_other(
        prefix: str, fields: dict[str, str], caplog: pytest.LogCaptureFixture) -> None:
    """Between good entries, in one batch: it is logged and acknowledged; the rest is stored."""
    queue = AuditQueue(RedisSpoolSink(url=REDIS_URL, prefix=prefix))
    for n in range(3):
        queue.record(entry(n))
    await queue.close()
    stream = SpoolKeys(prefix).stream
    client = redis.Redis.from_url(REDIS_URL, decode_responses=True)
    try:
        client.xadd(stream, fields)  # type: ignore[arg-type]
        client.xadd(stream, {"h": json.dumps(["x-2", WHEN + 5, *GOOD_HEAD[2:]]), "a": '{"n": 5}'})
        totals = await sync_to_async(Drain(url=REDIS_URL, prefix=prefix, block=0.1).run)(once=True)
        assert (totals.malformed, totals.written, totals.batches) == (1, 4, 1)
        assert [r.arguments["n"] for r in await rows()] == [0, 1, 2, 5]
        assert client.xpending(stream, GROUP)["pending"] == 0 and client.xlen(stream) == 0
    finally:
        client.close()
    logged = [r.getMessage() for r in caplog.records if r.name == "access.drain"]
    assert len(logged) == 1 and "is not an audit entry" in logged[0]


def test_the_sqlite_time_text_is_what_django_stores() -> None:
    from datetime import UTC, datetime, timedelta, timezone
    from zoneinfo import ZoneInfo

    from access.audit import sqlite_time

    cases = [WHEN, 1_790_000_000.0, 1_790_000_000.9999996, 1_790_000_000.0000004, 0.5, 1e-7,
             1_790_000_000.1234565, 1_711_846_800.25]  # the last: a DST change in Paris
    for zone in (UTC, ZoneInfo("Europe/Paris"), timezone(timedelta(hours=-3, minutes=-30))):
        text = sqlite_time(zone)
        for t in cases:
            assert text(t) == str(datetime.fromtimestamp(t, zone).replace(tzinfo=None)), (zone, t)


async def test_a_drain_on_a_redis_cluster_reads_the_parsed_replies(tmp_path: Path) -> None:
    """A Cluster client keeps redis-py's reply callbacks (its nodes' clients parse): the drain
    reads their dicts, claims included."""
    if not have_redis_server():
        pytest.skip("needs redis-server and redis-cli")
    cluster = PrivateCluster(tmp_path).start()
    try:
        options = {"url": cluster.url, "mode": "cluster", "prefix": "drainc"}
        queue = AuditQueue(RedisSpoolSink(**options))
        for n in range(10):
            queue.record(entry(n))
        await queue.close()

        def die(count: int) -> None:
            raise RuntimeError("killed after its commit")

        first = Drain(**options, batch=4, consumer="first", after_commit=die)
        first.ensure_group()
        with pytest.raises(RuntimeError):
            await sync_to_async(first.step)(block=False)
        second = Drain(**options, block=0.1, claim_after=0, consumer="second")
        totals = await sync_to_async(second.run)(once=True)
        assert (totals.claimed, totals.written, totals.malformed) == (4, 10, 0)
        assert [r.arguments["n"] for r in await rows()] == list(range(10))
    finally:
        cluster.stop()


async def test_entries_encoded_one_by_one_land_as_the_queues_rows_do(prefix: str) -> None:
    """``encode`` (prepared entries, h and a each) goes through ``write`` as the same command as
    ``encode_rows``: the drain stores them alike, lone surrogates included."""
    sink = RedisSpoolSink(url=REDIS_URL, prefix=prefix)
    try:
        prepared = [entry(0, arguments_json='{"n": 0}'), entry(1, arguments_json='{"text": "\\ud800"}')]
        assert await sink.write(sink.encode(prepared)) == 0
    finally:
        await sink.close()
    totals = await sync_to_async(Drain(url=REDIS_URL, prefix=prefix, block=0.1).run)(once=True)
    assert totals.written == 2
    assert [r.arguments for r in await rows()] == [{"n": 0}, {"text": "\ud800"}]
