"""``python manage.py runserver`` (daphne's, as ``daphne`` is in INSTALLED_APPS) serves ``/mcp``
through the project's Channels routing, streaming included: a tools/call answered as SSE event by
event, and a GET stream that stays open (priming event, then keep-alives). A real runserver
process with its autoreloader, on a free port."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import httpx
import pytest

from tests.support import MEMORY_PROVIDER, LiveServer, live_server_fixture
from tests.support.mcp_http import open_session, request, session_headers, sse_events
from tests.support.polling import wait_until

pytestmark = pytest.mark.timeout(90)
live = live_server_fixture(
    server="runserver",
    provider=MEMORY_PROVIDER,
    startup_timeout=60.0,
    env={"MCP_KEEPALIVE_SECONDS": "0.3", "DJANGO_DEBUG": "1"},
)


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=10) as c:
        yield c


async def test_runserver_answers_a_streaming_tool_call_with_sse_event_by_event(
    live: LiveServer, client: httpx.AsyncClient
) -> None:
    session_id = await open_session(client, live.url)
    call = request(
        7, "tools/call", {"name": "countdown", "arguments": {"steps": 3}, "_meta": {"progressToken": "p"}}
    )
    async with client.stream("POST", live.url, headers=session_headers(session_id), json=call) as response:
        assert response.status_code == 200
        assert response.headers["content-type"] == "text/event-stream"
        messages = []
        async with asyncio.timeout(15):
            async for event in sse_events(response):
                if event.data:
                    messages.append(event.message)
    progress = [m for m in messages if m.get("method") == "notifications/progress"]
    assert len(progress) == 3
    assert messages[-1]["id"] == 7 and messages[-1]["result"]["content"][0]["text"] == "counted 3 steps"


async def test_runserver_keeps_a_get_stream_open_with_priming_and_keepalives(
    live: LiveServer, client: httpx.AsyncClient
) -> None:
    session_id = await open_session(client, live.url)
    headers = {**session_headers(session_id), "accept": "text/event-stream"}
    async with client.stream("GET", live.url, headers=headers) as response:
        assert response.status_code == 200 and response.headers["content-type"] == "text/event-stream"
        seen_priming = keepalives = 0
        async with asyncio.timeout(10):
            async for event in sse_events(response):
                seen_priming += event.is_priming
                keepalives += bool(event.comments)
                if seen_priming and keepalives >= 2:  # still open after two keep-alive periods
                    break
    assert seen_priming == 1


async def test_runserver_serves_the_admin_beside_mcp(live: LiveServer, client: httpx.AsyncClient) -> None:
    response = await client.get(f"{live.base_url}/admin/login/")
    assert response.status_code == 200 and "mcpsite admin" in response.text


async def test_runserver_logs_each_request_line_once(live: LiveServer, client: httpx.AsyncClient) -> None:
    """Django's "django" logger had a console handler of its own beside the root's: every line of
    runserver and every "Not Found" came out twice (mcpsite/settings.py LOGGING)."""
    assert (await client.get(f"{live.base_url}/admin/login/?once")).status_code == 200
    assert (await client.get(f"{live.base_url}/no-such-page-once")).status_code == 404

    def logged(text: str) -> int:
        return sum(text in line for line in live.log_text().splitlines())

    await asyncio.to_thread(
        wait_until, "the request lines in the log", lambda: logged("/no-such-page-once 404") >= 1, 10
    )
    assert logged("HTTP GET /admin/login/?once 200") == 1, live.log_text()
    assert logged("Not Found: /no-such-page-once") == 1, live.log_text()
    assert logged("HTTP GET /no-such-page-once 404") == 1, live.log_text()
