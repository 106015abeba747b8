"""An always-stream call's finished stream resumes from any of its event ids for the event ttl,
on real server processes: on another worker sharing Redis, and on one memory-store worker after
its collector has run over the compact form the store keeps finished logs in
(``stores/memory/logs.py`` ``Finished``; the stream's first entry is written with the response,
``streams.py``). [L] basic/transports.mdx "Resumability and Redelivery", [11] the priming event.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import httpx
import pytest

from tests.support import MEMORY_PROVIDER, LiveServer
from tests.support.mcp_http import (
    SSEEvent,
    open_session,
    request,
    session_headers,
    sse_events,
    stream_headers,
)
from tests.support.shared_redis import REDIS_URL, new_prefix, redis_prefix

pytestmark = pytest.mark.timeout(90)
ALWAYS = {"MCP_ALWAYS_STREAM": "1", "MCP_KEEPALIVE_SECONDS": "0.5"}


@pytest.fixture(scope="module")
def redis_pair() -> Iterator[tuple[LiveServer, LiveServer]]:
    with redis_prefix(new_prefix()) as prefix:
        env = {**ALWAYS, "REDIS_URL": REDIS_URL, "MCP_KEY_PREFIX": prefix}
        with LiveServer(provider=MEMORY_PROVIDER, env=env) as a, \
                LiveServer(provider=MEMORY_PROVIDER, env=env) as b:
            yield a, b


@pytest.fixture(scope="module")
def memory_worker() -> Iterator[LiveServer]:
    with LiveServer(provider=MEMORY_PROVIDER, env=ALWAYS) as server:
        yield server


async def _events(response: httpx.Response) -> list[SSEEvent]:
    found = []
    async with asyncio.timeout(10):
        async for event in sse_events(response):
            found.append(event)
    return found


async def _call(client: httpx.AsyncClient, url: str, session_id: str, n: int) -> list[SSEEvent]:
    body = request(n, "tools/call", {"name": "echo", "arguments": {"message": f"m{n}"}})
    async with client.stream("POST", url, headers=session_headers(session_id), json=body) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        return await _events(response)


async def _resume(client: httpx.AsyncClient, url: str, session_id: str, after: str) -> list[SSEEvent]:
    async with client.stream("GET", url, headers=stream_headers(session_id, after)) as response:
        assert response.status_code == 200, await response.aread()
        return [e for e in await _events(response) if e.data]


async def _check_resumes(client: httpx.AsyncClient, url: str, session_id: str, call: list[SSEEvent]) -> None:
    priming, answer = call
    assert priming.id and not priming.data  # [11] the priming event: an id and empty data
    assert answer.id and answer.message["id"] == 1
    again = await _resume(client, url, session_id, priming.id)
    assert [(e.id, e.message) for e in again] == [(answer.id, answer.message)]
    assert await _resume(client, url, session_id, answer.id) == []  # complete: ends at once


async def test_a_finished_stream_resumes_on_another_worker(redis_pair: tuple[LiveServer, LiveServer]) -> None:
    a, b = redis_pair
    async with httpx.AsyncClient(timeout=10) as client:
        session_id = await open_session(client, a.url)
        call = await _call(client, a.url, session_id, 1)
        await _check_resumes(client, b.url, session_id, call)
        await _check_resumes(client, a.url, session_id, call)


async def test_a_finished_stream_resumes_after_the_collector_ran_over_the_compact_log(
    memory_worker: LiveServer,
) -> None:
    async with httpx.AsyncClient(timeout=10) as client:
        session_id = await open_session(client, memory_worker.url)
        call = await _call(client, memory_worker.url, session_id, 1)
        # Young collections run every 50,000 allocations (MCP GC_THRESHOLD): a few hundred calls
        # pass several, which stop tracking the compact log.
        for n in range(2, 400):
            assert len(await _call(client, memory_worker.url, session_id, n)) == 2
        await _check_resumes(client, memory_worker.url, session_id, call)
