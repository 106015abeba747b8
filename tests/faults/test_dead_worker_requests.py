"""A request never outlives its worker silently (issue 15, "requests outlive nothing silently").

A ``tools/call`` whose handler waits on the client (a sampling request on its POST stream) runs
on worker A; A is killed (kill -9); the client resumes the POST stream on B with ``Last-Event-ID``:
the events up to the kill replay exactly, then a JSON-RPC error response for the request's id
(-32603, the worker stopped, may be retried) arrives within the lease plus a few seconds, and the
stream ends. The client's late answer to the dead worker's sampling request is accepted (202) and
changes nothing.
"""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest

from mcp_protocol.transports.leases import LEASE, POLL
from tests.support.fleets import Fleet, kill9
from tests.support.mcp_http import (
    next_data,
    open_session,
    request,
    session_headers,
    sse_events,
    stream_headers,
)

pytestmark = pytest.mark.timeout(120)
WAIT = 20.0
BOUND = LEASE + POLL + 4.0  # s: the lease lapses, a poll notices, the error is written and read


@pytest.mark.parametrize("partner", ["warm", "cold"])
async def test_a_request_whose_worker_died_ends_with_an_error_on_the_resumed_stream(
    partner: str, fleet: Fleet
) -> None:
    a = fleet.worker()
    b = fleet.worker(cold=partner == "cold")
    async with httpx.AsyncClient(timeout=WAIT) as client:
        session_id = await open_session(client, a.url)
        call = request(7, "tools/call", {"name": "ask_llm", "arguments": {"prompt": "hi"}})
        async with client.stream("POST", a.url, headers=session_headers(session_id), json=call) as stream:
            assert stream.status_code == 200
            ask = await next_data(sse_events(stream), WAIT)
            assert ask.message["method"] == "sampling/createMessage" and ask.id is not None
            kill9(a)
            killed = time.monotonic()
        answered = await client.post(b.url, headers=session_headers(session_id), json={
            "jsonrpc": "2.0", "id": ask.message["id"],
            "result": {"role": "assistant", "content": {"type": "text", "text": "late"}, "model": "m"}})
        assert answered.status_code == 202, answered.text
        async with client.stream("GET", b.url, headers=stream_headers(session_id, ask.id)) as resumed:
            assert resumed.status_code == 200, await resumed.aread()
            events = sse_events(resumed)
            error = await next_data(events, WAIT)
            seconds = time.monotonic() - killed
            rest = []
            async with asyncio.timeout(WAIT):
                async for event in events:  # the stream ends after the error
                    if event.data:
                        rest.append(event)
    body = error.message
    print(f"{partner} partner: the error for id 7 came {seconds:.1f} s after kill -9 (bound {BOUND:.0f} s)")
    assert body.get("id") == 7 and body.get("error", {}).get("code") == -32603 and not rest, (
        f"{partner} partner, A killed mid-request: resumed stream gave {body} then {len(rest)} more")
    assert "stopped" in body["error"]["message"] and "retried" in body["error"]["message"]
    assert seconds <= BOUND, (
        f"{partner} partner: the error came {seconds:.1f} s after the kill (bound {BOUND:.0f} s)")
