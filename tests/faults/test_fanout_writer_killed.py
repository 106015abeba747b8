"""A worker killed (kill -9) while it writes a change's notifications to every session's log
(the fan-out publish): its partner takes the change over once the writer's lease lapses and writes
the rest, skipping the sessions already reached. Every session gets the notification exactly once.

Worker B is frozen (SIGSTOP) while the change is published, so A is the writer; A is killed as
soon as some sessions have the notification; B is resumed (SIGCONT) and finishes the change.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
import uuid

import pytest
import redis

from mcp_protocol.bus.base import CHANGES
from mcp_protocol.bus.redis import RedisBus
from mcp_protocol.fanout import change_key
from mcp_protocol.session import Session
from mcp_protocol.stores.events import STANDALONE_STREAM
from mcp_protocol.stores.redis import RedisEventStore, RedisSessionStore
from tests.support.fleets import Fleet, kill9

pytestmark = pytest.mark.timeout(120)
SESSIONS = 4000
WAIT = 30.0


def counts(client: redis.Redis, keys: list[str], tag: str) -> list[int]:
    """How many entries tagged ``tag`` each stream key holds."""
    pipe = client.pipeline(transaction=False)
    for key in keys:
        pipe.xrange(key)
    return [sum(1 for _, fields in entries if fields.get(b"t") == tag.encode())
            for entries in pipe.execute()]


async def test_a_fanout_writer_killed_mid_publish_leaves_every_session_notified_exactly_once(
    fleet: Fleet,
) -> None:
    a, b = fleet.worker(), fleet.worker()
    prefix, url = fleet.env["MCP_KEY_PREFIX"], fleet.env["REDIS_URL"]
    store = RedisSessionStore(url=url, prefix=prefix)
    queue = iter(range(SESSIONS))

    async def create() -> None:
        for _ in queue:
            session = Session.create()
            session.state = "ready"
            await store.create(session)

    await asyncio.wait_for(asyncio.gather(*(create() for _ in range(32))), WAIT)
    ids = await store.session_ids()
    await store.close()
    events = RedisEventStore(url=url, prefix=prefix)
    keys = [events._stream(sid, STANDALONE_STREAM) for sid in ids]
    await events.close()
    change = {"id": uuid.uuid4().hex, "kind": "tools", "uris": []}
    tag = f"{change_key(change)}|list:tools"
    client = redis.Redis.from_url(url)
    bus = RedisBus(url=url, prefix=prefix)
    assert a.process is not None and b.process is not None
    try:
        os.killpg(b.process.pid, signal.SIGSTOP)
        try:
            await bus.publish(CHANGES, change)
            sample = keys[:: max(1, SESSIONS // 200)]
            deadline = time.monotonic() + WAIT
            while not any(counts(client, sample, tag)):
                assert time.monotonic() < deadline, "A never started writing the change"
                await asyncio.sleep(0.002)
            kill9(a)
            by_a = sum(1 for c in counts(client, keys, tag) if c)
        finally:
            os.killpg(b.process.pid, signal.SIGCONT)
        resumed = time.monotonic()
        while True:
            found = counts(client, keys, tag)
            if all(found) or time.monotonic() - resumed > WAIT:
                break
            await asyncio.sleep(0.2)
        finished_after = time.monotonic() - resumed
    finally:
        await bus.close()
        client.close()
    lost = sum(1 for c in found if c == 0)
    duplicated = sum(c - 1 for c in found if c > 1)
    figures = (f"{SESSIONS} sessions: A wrote {by_a} before kill -9, B the other {SESSIONS - by_a} "
               f"within {finished_after:.1f} s of SIGCONT; {lost} lost, {duplicated} duplicated")
    print(figures)
    assert lost == 0 and duplicated == 0, figures
    assert b.returncode is None, b.log_text()
