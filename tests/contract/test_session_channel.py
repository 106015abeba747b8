"""The session's bus channel across workers (transports/pending.py) on memory and on the real
Redis: a client's ``notifications/cancelled`` and its answers to server→client requests, received
by one worker, reach the worker that runs the request; the subscription ends with its last user."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from mcp_protocol.bus.base import Bus
from mcp_protocol.jsonrpc import RequestId, Response
from mcp_protocol.transports.pending import PendingRequests
from tests.support.polling import within


async def test_cancel_and_answer_posted_to_one_worker_reach_the_worker_running_the_request(
    make_bus: Callable[..., Bus],
) -> None:
    cancelled: asyncio.Queue[tuple[str, RequestId]] = asyncio.Queue()

    def running_here(session_id: str, request_id: RequestId) -> bool:
        cancelled.put_nowait((session_id, request_id))
        return True

    running = PendingRequests(make_bus(), on_cancel=running_here)
    receiving = PendingRequests(make_bus())  # runs nothing: forwards
    try:
        asked = running.new_id()
        answer = await running.expect("s1", asked)
        await running.acquire("s2")
        await receiving.cancel("s2", {"requestId": "call-1"})
        await receiving.cancel("s1", {"requestId": 9, "reason": "stop"})
        await receiving.deliver("s1", Response(asked, result={"text": "hi"}))
        assert {await within(cancelled.get()), await within(cancelled.get())} == {
            ("s2", "call-1"),
            ("s1", 9),
        }
        assert (await within(answer))[0].result == {"text": "hi"}  # (response, answered_in)
        await running.release("s1", asked)
        await running.release("s2")
        assert running._listeners == {}
    finally:
        await running.close()
        await receiving.close()
