"""Session limits and expiry, and a clean shutdown under uvicorn and daphne with streams open.

Each test starts its own small server (different settings), on its own port and database.
"""

from __future__ import annotations

import asyncio
import signal
import time

import httpx
import pytest

from tests.support import MEMORY_PROVIDER, LiveServer
from tests.support.mcp_http import (
    POST_HEADERS,
    initialize_message,
    open_session,
    request,
    session_headers,
    sse_events,
)

pytestmark = pytest.mark.timeout(90)


@pytest.mark.parametrize(("cap", "message"), [
    ("MCP_MAX_SESSIONS", "Too many live sessions (limit 2)"),
    # Open mode: every caller is the same (anonymous) principal.
    ("MCP_MAX_SESSIONS_PER_PRINCIPAL", "Too many live sessions for this principal (limit 2)"),
])
async def test_session_cap_gives_a_clear_error_until_a_session_ends(cap: str, message: str) -> None:
    with LiveServer(provider=MEMORY_PROVIDER, env={cap: "2"}) as live:
        async with httpx.AsyncClient(timeout=10) as client:
            first = await open_session(client, live.url)
            await open_session(client, live.url)
            refused = await client.post(live.url, headers=POST_HEADERS, json=initialize_message())
            assert refused.status_code == 503
            body = refused.json()
            assert body["id"] == 0 and body["error"]["code"] == -32000
            assert message in body["error"]["message"], body
            assert "mcp-session-id" not in refused.headers
            assert (await client.delete(live.url, headers=session_headers(first))).status_code == 200
            await open_session(client, live.url)


async def test_idle_session_expires_and_then_gets_404() -> None:
    with LiveServer(provider=MEMORY_PROVIDER, env={"MCP_SESSION_TTL": "1"}) as live:
        async with httpx.AsyncClient(timeout=10) as client:
            session_id = await open_session(client, live.url)
            ping = request(1, "ping")
            assert (
                await client.post(live.url, headers=session_headers(session_id), json=ping)
            ).status_code == 200
            deadline = time.monotonic() + 10
            status = 200
            while status == 200 and time.monotonic() < deadline:
                await asyncio.sleep(0.5)  # nothing to wait on: expiry is the passage of time itself
                status = (
                    await client.post(live.url, headers=session_headers(session_id), json=ping)
                ).status_code
                if status == 200:  # that request slid the expiry: wait longer than the TTL next time
                    await asyncio.sleep(1.2)
                    status = (
                        await client.post(live.url, headers=session_headers(session_id), json=ping)
                    ).status_code
            assert status == 404


@pytest.mark.parametrize("server", ["uvicorn", "daphne"])
async def test_sigterm_with_open_streams_shuts_down_cleanly(server: str) -> None:
    live = LiveServer(provider=MEMORY_PROVIDER, server=server).start()
    try:
        async with httpx.AsyncClient(timeout=10) as client:
            session_id = await open_session(client, live.url)
            headers = {**session_headers(session_id), "accept": "text/event-stream"}
            async with client.stream("GET", live.url, headers=headers) as stream:
                assert stream.status_code == 200
                started = time.monotonic()
                code = await asyncio.to_thread(live.stop, 15.0, keep_log=True)
                async with asyncio.timeout(5):
                    async for _ in sse_events(stream):
                        pass
        assert time.monotonic() - started < 10, "the open stream held the shutdown up"
        # uvicorn re-raises the SIGTERM after its graceful shutdown, so it exits "by" the signal.
        assert code in (0, -signal.SIGTERM), live.last_log
        assert "MCP runtime closed" in live.last_log, live.last_log  # lifespan / reactor shutdown ran
        assert "Traceback" not in live.last_log and "destroyed but it is pending" not in live.last_log, (
            live.last_log
        )
    finally:
        live.stop()
