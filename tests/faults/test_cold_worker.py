"""A worker fans out registry changes from its startup, not from its first request (issue 15,
"workers ready before they serve"), and a GET stream lost with its worker (kill -9) resumes on
the partner with every change: none lost, none twice.

Two workers on a private Redis: the client's GET stream is on A; 50 changes are published on the
bus (what every admin, API or shell edit publishes after its commit); A is killed after 25; the
client resumes on B with ``Last-Event-ID``. B is warm (it served ``/mcp`` before) or cold (it
answered only ``/healthz``: it must have subscribed at startup, from the ASGI lifespan under
uvicorn and from the reactor under daphne).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator

import httpx
import pytest

from mcp_protocol.bus.base import CHANGES
from mcp_protocol.bus.redis import RedisBus
from tests.support.fleets import KEEPALIVE, Fleet, kill9
from tests.support.mcp_http import (
    SSEEvent,
    next_comment,
    next_data,
    open_session,
    sse_events,
    stream_headers,
)

pytestmark = pytest.mark.timeout(120)
EDITS, KILL_AFTER = 50, 25
WAIT = 15.0
LIST_CHANGED = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}


async def publish(bus: RedisBus, count: int) -> None:
    for _ in range(count):
        await bus.publish(CHANGES, {"id": uuid.uuid4().hex, "kind": "tools", "uris": []})


async def more_data(events: AsyncIterator[SSEEvent], seconds: float) -> list[SSEEvent]:
    """Messages that arrive within ``seconds`` more (after all expected ones: duplicates)."""
    found: list[SSEEvent] = []
    try:
        async with asyncio.timeout(seconds):
            async for event in events:
                if event.data:
                    found.append(event)
    except TimeoutError:
        pass
    return found


async def take(events: AsyncIterator[SSEEvent], count: int) -> list[SSEEvent]:
    return [await next_data(events, WAIT) for _ in range(count)]


@pytest.mark.parametrize("partner", ["cold uvicorn", "cold daphne", "warm uvicorn"])
async def test_a_stream_lost_with_its_worker_resumes_on_the_partner_with_no_change_lost(
    partner: str, fleet: Fleet
) -> None:
    a = fleet.worker()
    b = fleet.worker(cold=partner.startswith("cold"), server=partner.split()[1])
    bus = RedisBus(url=fleet.env["REDIS_URL"], prefix=fleet.env["MCP_KEY_PREFIX"])
    async with httpx.AsyncClient(timeout=WAIT) as client:
        session_id = await open_session(client, a.url)
        async with client.stream("GET", a.url, headers=stream_headers(session_id)) as stream:
            assert stream.status_code == 200
            events = sse_events(stream)
            await next_comment(events)  # the stream is open: changes from now on reach it
            await publish(bus, KILL_AFTER)
            before = await take(events, KILL_AFTER)
            kill9(a)
            await publish(bus, EDITS - KILL_AFTER)  # A is dead: only B can write these
        assert before[-1].id is not None
        resume = stream_headers(session_id, before[-1].id)
        async with client.stream("GET", b.url, headers=resume) as stream:
            assert stream.status_code == 200, await stream.aread()
            events = sse_events(stream)
            after: list[SSEEvent] = []
            try:
                async with asyncio.timeout(WAIT):
                    while len(after) < EDITS - KILL_AFTER:
                        after.append(await next_data(events, WAIT))
            except TimeoutError:
                pass
            extra = await more_data(events, seconds=3 * KEEPALIVE)
    await bus.close()
    got = before + after
    lost = EDITS - len(got)
    ids = [e.id for e in got]
    duplicated = len(ids) - len(set(ids)) + len(extra)
    print(f"{partner} partner: {EDITS} changes, A killed after {KILL_AFTER}: "
          f"{lost} lost, {duplicated} duplicated")
    assert lost == 0 and duplicated == 0 and all(e.message == LIST_CHANGED for e in got), (
        f"{partner} partner: {EDITS} changes, A killed after {KILL_AFTER}: {lost} lost, "
        f"{duplicated} duplicated ({len(before)} on A, {len(after)} replayed on B)")
