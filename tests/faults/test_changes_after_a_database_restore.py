"""Every edit reaches every stream after PostgreSQL is restored from a backup or made anew beside a
Redis that outlives it (issue 38 item 6).

Change set ids start again on a restored or fresh database, while Redis keeps the fan-out's
exactly-once claims (an hour) of the change sets it already wrote. Named by the id, the new edit's
messages were taken for the old ones, already written: no stream heard of it. Named by the change
set's ``uid``, they cannot repeat across databases. The restore itself, which writes no change
set, is found by the reconcilers (their newest change set is gone) and announced as every list
changed, once. Two worker processes, one PostgreSQL database (``pg_dump`` / ``pg_restore`` for the
backup), a private Redis, a GET stream on each worker.
"""

from __future__ import annotations

import asyncio
import subprocess
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack
from pathlib import Path

import httpx
import pytest

from tests.support import REGISTRY_PROVIDER, LiveServer
from tests.support.fleets import Fleet, running_fleet
from tests.support.mcp_http import (
    SSEEvent,
    next_comment,
    next_data,
    open_session,
    request,
    session_headers,
    sse_events,
    stream_headers,
)
from tests.support.migrated import postgres_copy
from tests.support.postgres import temporary_database

pytestmark = pytest.mark.timeout(180)
WAIT = 20.0  # s: the deadline of every wait for something the fleet does by itself
RECONCILE = 1.0  # s: REGISTRY_RECONCILE_SECONDS of the workers
LIST_CHANGED = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
EVERY_LIST_CHANGED = [
    {"jsonrpc": "2.0", "method": f"notifications/{kind}/list_changed"}
    for kind in ("tools", "resources", "prompts")
]
ADD_TOOL = (
    "from registry.models import Tool; "
    "Tool.objects.create(name='{name}', description='d', kind='template', template_text='hi', "
    "input_schema={{'type': 'object', 'properties': {{}}}})"
)


@pytest.fixture
def database_url() -> Iterator[str]:
    with temporary_database("mcpsite_restore") as url:
        yield url


@pytest.fixture
def fleet(tmp_path: Path, database_url: str) -> Iterator[Fleet]:
    with running_fleet(
        tmp_path, provider=REGISTRY_PROVIDER, database_url=database_url,
        REGISTRY_RECONCILE_SECONDS=str(RECONCILE),
    ) as fleet:
        fleet.migrate()
        yield fleet


async def open_streams(client: httpx.AsyncClient, workers: list[LiveServer],
                       streams: AsyncExitStack) -> list[AsyncIterator[SSEEvent]]:
    """A 2025-11-25 session's GET stream on each worker, live."""
    opened = []
    for worker in workers:
        session_id = await open_session(client, worker.url)
        response = await streams.enter_async_context(
            client.stream("GET", worker.url, headers=stream_headers(session_id))
        )
        assert response.status_code == 200
        opened.append(sse_events(response))
        await next_comment(opened[-1], WAIT)
    return opened


async def edit_reaches_every_stream(fleet: Fleet, everyone: list[AsyncIterator[SSEEvent]]) -> str:
    """A tool added from a shell (no worker of the fleet wrote it): every stream hears of it, once."""
    name = f"t_{uuid.uuid4().hex[:6]}"
    await asyncio.to_thread(fleet.manage, "shell", "-c", ADD_TOOL.format(name=name))
    for events in everyone:
        assert (await next_data(events, WAIT)).message == LIST_CHANGED
    for events in everyone:
        await next_comment(events, WAIT)  # once
    return name


async def serves(client: httpx.AsyncClient, worker: LiveServer, name: str) -> bool:
    session_id = await open_session(client, worker.url)
    listed = await client.post(worker.url, headers=session_headers(session_id), json=request(1, "tools/list"))
    assert listed.status_code == 200, listed.text
    return name in {tool["name"] for tool in listed.json()["result"]["tools"]}


def pg(tool: str, *argv: str) -> None:
    subprocess.run([tool, "-h", "127.0.0.1", "-U", "postgres", *argv], check=True, timeout=60,
                   capture_output=True)


async def test_every_edit_reaches_every_stream_across_a_backup_and_restore(
    fleet: Fleet, database_url: str, tmp_path: Path
) -> None:
    workers = fleet.start(2)
    backup = tmp_path / "registry.dump"
    async with httpx.AsyncClient(timeout=WAIT) as client, AsyncExitStack() as streams:
        everyone = await open_streams(client, workers, streams)
        await asyncio.to_thread(pg, "pg_dump", "-Fc", "-f", str(backup), "-d", database_url)
        lost = await edit_reaches_every_stream(fleet, everyone)  # change set N, claimed in Redis
        # The database goes back to the backup (one transaction: no worker reads it half
        # restored), workers and streams live: the next change set is N again.
        restore = ["--clean", "--if-exists", "--single-transaction", "-d", database_url, str(backup)]
        await asyncio.to_thread(pg, "pg_restore", *restore)
        for events in everyone:  # the reconcilers found the restore: every list changed, once
            announced = [(await next_data(events, WAIT)).message for _ in EVERY_LIST_CHANGED]
            assert announced == EVERY_LIST_CHANGED
        for events in everyone:
            await next_comment(events, 2 * RECONCILE + 1)
        for worker in workers:
            assert not await serves(client, worker, lost)  # restored away, announced: served so
        name = await edit_reaches_every_stream(fleet, everyone)
        await edit_reaches_every_stream(fleet, everyone)
    async with httpx.AsyncClient(timeout=WAIT) as client:
        for worker in workers:
            assert await serves(client, worker, name)


async def test_an_edit_on_a_fresh_database_beside_an_old_redis_reaches_every_stream(
    fleet: Fleet, database_url: str
) -> None:
    async with httpx.AsyncClient(timeout=WAIT) as client:
        first = fleet.start(2)
        async with AsyncExitStack() as streams:
            await edit_reaches_every_stream(fleet, await open_streams(client, first, streams))
        for worker in first:
            worker.stop()
        # The same database made again from scratch (migrated), the same Redis: ids start again.
        await asyncio.to_thread(postgres_copy, database_url)
        workers = fleet.start(2)
        async with AsyncExitStack() as streams:
            await edit_reaches_every_stream(fleet, await open_streams(client, workers, streams))
