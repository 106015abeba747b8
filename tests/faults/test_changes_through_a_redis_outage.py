"""A registry edit made while Redis is down reaches every stream once Redis is back (issue 38
item 4): two worker processes on one PostgreSQL database and a private Redis that keeps every write
(AOF); a 2025-11-25 session's GET stream on each, read as a client does (cut off by the outage, it
resumes with ``Last-Event-ID``), and a legacy HTTP+SSE client on worker A, whose stream is kept
through the outage (it cannot resume: ``transports/legacy_sse.py`` ``RIDE_OUT_SECONDS``).

The edit's own publish fails (Redis is down), so only the reconcilers can announce it. Redis stays
down until every worker's reconciler has found the change set missed and failed to publish it again,
which is when the old reconciler counted it handled and never looked again; the streams then get
``notifications/tools/list_changed`` once each, from the first check after Redis returns.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Iterator
from contextlib import AsyncExitStack
from typing import Any

import httpx
import pytest

from tests.support import REGISTRY_PROVIDER, LiveServer
from tests.support.fleets import Fleet, running_fleet
from tests.support.mcp_http import (
    POST_HEADERS,
    initialize_message,
    notification,
    open_session,
    sse_events,
    stream_headers,
)
from tests.support.polling import eventually
from tests.support.postgres import temporary_database
from tests.support.private_redis import PERSISTENT

pytestmark = pytest.mark.timeout(150)
RECONCILE = 1.0  # s: REGISTRY_RECONCILE_SECONDS of the workers
WAIT = 20.0  # s: the deadline of every wait for something the fleet does by itself
LIST_CHANGED = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
REPUBLISH_FAILED = "could not publish missed change"  # reconcile.py's warning, in a worker's log
ADD_TOOL = (
    "from registry.models import Tool; "
    "Tool.objects.create(name='{name}', description='d', kind='template', template_text='hi', "
    "input_schema={{'type': 'object', 'properties': {{}}}})"
)


@pytest.fixture
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fleet]:
    with (
        temporary_database("mcpsite_outage") as database_url,
        running_fleet(
            tmp_path_factory.mktemp("redis"),
            provider=REGISTRY_PROVIDER,
            database_url=database_url,
            redis_args=PERSISTENT,
            REGISTRY_RECONCILE_SECONDS=str(RECONCILE),
        ) as fleet,
    ):
        fleet.migrate()
        yield fleet


class ResumingStream:
    """A 2025-11-25 session's standalone GET stream, read all along as a client does: cut off (its
    worker lost Redis), it comes back with ``Last-Event-ID`` until served again (503 meanwhile)."""

    def __init__(self, client: httpx.AsyncClient, worker: LiveServer, session_id: str) -> None:
        self.client, self.worker, self.session_id = client, worker, session_id
        self.last_event_id: str | None = None
        self.resumed = 0  # times the stream was cut and the client came back
        self.messages: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.live = asyncio.Event()
        self.task = asyncio.create_task(self._read())

    @classmethod
    async def open(cls, client: httpx.AsyncClient, worker: LiveServer) -> ResumingStream:
        stream = cls(client, worker, await open_session(client, worker.url))
        await asyncio.wait_for(stream.live.wait(), WAIT)
        return stream

    async def _read(self) -> None:
        while True:
            headers = stream_headers(self.session_id, self.last_event_id)
            with contextlib.suppress(httpx.TransportError):
                async with self.client.stream("GET", self.worker.url, headers=headers) as response:
                    if response.status_code == 503:  # Redis not back yet: the client retries
                        await asyncio.sleep(0.1)
                        continue
                    assert response.status_code == 200, await response.aread()
                    async for event in sse_events(response):
                        self.live.set()
                        if event.id:
                            self.last_event_id = event.id
                        if event.data:
                            await self.messages.put(event.message)
            self.resumed += 1

    async def next_message(self, seconds: float) -> dict[str, Any] | None:
        """The next message within ``seconds``; None if none came."""
        try:
            return await asyncio.wait_for(self.messages.get(), seconds)
        except TimeoutError:
            return None

    async def close(self) -> None:
        self.task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self.task


class LegacyStream:
    """A 2024-11-05 HTTP+SSE client, initialized, its stream read all along. It cannot resume: a
    stream cut by the outage is its session lost (``ended``)."""

    def __init__(self, response: httpx.Response) -> None:
        self.events = sse_events(response)
        self.messages: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.ended = False
        self.task: asyncio.Task[None] | None = None

    @classmethod
    async def open(cls, client: httpx.AsyncClient, worker: LiveServer, stack: AsyncExitStack) -> LegacyStream:
        url = f"{worker.base_url}/sse"
        response = await stack.enter_async_context(
            client.stream("GET", url, headers={"accept": "text/event-stream"})
        )
        assert response.status_code == 200
        stream = cls(response)
        endpoint = await anext(stream.events)
        assert endpoint.event == "endpoint"
        post_url = str(httpx.URL(url).join(endpoint.data or ""))
        posted = await client.post(post_url, headers=POST_HEADERS, json=initialize_message("2024-11-05"))
        assert posted.status_code == 202, posted.text
        stream.task = asyncio.create_task(stream._read())
        assert "result" in (await asyncio.wait_for(stream.messages.get(), WAIT))
        initialized = notification("notifications/initialized")
        sent = await client.post(post_url, headers=POST_HEADERS, json=initialized)
        assert sent.status_code == 202, sent.text
        return stream

    async def _read(self) -> None:
        with contextlib.suppress(httpx.TransportError):
            async for event in self.events:
                if event.data:
                    await self.messages.put(event.message)
        self.ended = True

    async def next_message(self, seconds: float) -> dict[str, Any] | None:
        try:
            return await asyncio.wait_for(self.messages.get(), seconds)
        except TimeoutError:
            assert not self.ended, "the HTTP+SSE stream ended: its session is lost"
            return None

    async def close(self) -> None:
        assert self.task is not None
        self.task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self.task


async def test_an_edit_made_while_redis_is_down_reaches_every_stream_once_redis_is_back(fleet: Fleet) -> None:
    a, b = fleet.start(2)
    async with httpx.AsyncClient(timeout=WAIT) as client, AsyncExitStack() as stack:
        legacy = await LegacyStream.open(client, a, stack)
        resuming = [await ResumingStream.open(client, a), await ResumingStream.open(client, b)]
        streams: list[LegacyStream | ResumingStream] = [legacy, *resuming]

        fleet.redis.stop()
        name = f"offline_{uuid.uuid4().hex[:6]}"
        await asyncio.to_thread(fleet.manage, "shell", "-c", ADD_TOOL.format(name=name))

        async def every_reconciler_failed_to_republish() -> bool:
            return all(REPUBLISH_FAILED in worker.log_text() for worker in (a, b))

        # The old reconciler had marked the change handled by now, for good.
        await eventually(every_reconciler_failed_to_republish, WAIT, step=0.1)
        fleet.redis.start()

        for stream in streams:
            assert await stream.next_message(WAIT) == LIST_CHANGED
        assert all(stream.resumed >= 1 for stream in resuming)  # the outage did cut them
        assert not legacy.ended  # kept through the outage: its client could not have resumed
        for stream in streams:
            assert await stream.next_message(4 * RECONCILE) is None  # once: every republish claimed once
            await stream.close()
