"""SSE streams of ``/mcp`` on the wire: framing, priming, keep-alive, the one GET stream, resume.

[L] basic/transports.mdx "Sending Messages", "Listening for Messages", "Multiple Connections",
"Resumability and Redelivery"; [11] SEP-1699 priming. Raw httpx against real uvicorn, the
in-memory demo provider, keep-alive every 0.3 s so tests can see comments quickly.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from tests.support import MEMORY_PROVIDER, live_server_fixture
from tests.support.live_server import LiveServer
from tests.support.mcp_http import SSEEvent, open_session, request, session_headers, sse_events

pytestmark = pytest.mark.timeout(60)
live = live_server_fixture(provider=MEMORY_PROVIDER, env={"MCP_KEEPALIVE_SECONDS": "0.3"})
EVENT_ID = re.compile(r"([A-Za-z0-9_-]+)\.(\d+)")


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=10) as c:
        yield c


def get_headers(
    session_id: str, last_event_id: str | None = None, version: str = "2025-11-25"
) -> dict[str, str]:
    headers = {**session_headers(session_id, version), "accept": "text/event-stream"}
    if last_event_id is not None:
        headers["last-event-id"] = last_event_id
    return headers


async def collect(response: httpx.Response, limit: float = 10.0) -> list[SSEEvent]:
    async with asyncio.timeout(limit):
        return [event async for event in sse_events(response)]


def countdown(id: int, steps: int = 2) -> dict[str, Any]:
    return request(
        id,
        "tools/call",
        {"name": "countdown", "arguments": {"steps": steps}, "_meta": {"progressToken": "p"}},
    )


async def test_streamed_response_has_sse_headers_priming_event_and_stream_ids(
    live: LiveServer, client: httpx.AsyncClient
) -> None:
    session_id = await open_session(client, live.url)
    async with client.stream(
        "POST", live.url, headers=session_headers(session_id), json=countdown(5)
    ) as response:
        assert response.status_code == 200
        assert response.headers["content-type"] == "text/event-stream"
        assert response.headers["cache-control"] == "no-cache"
        assert response.headers["x-accel-buffering"] == "no"
        events = [e for e in await collect(response) if not (e.comments and e.data is None)]
    priming, *messages = events
    assert priming.is_priming and priming.retry is not None
    ids = [e.id for e in events]
    assert all(i is not None and EVENT_ID.fullmatch(i) for i in ids) and len(set(ids)) == len(ids)
    assert len({EVENT_ID.fullmatch(i).group(1) for i in ids if i}) == 1  # type: ignore[union-attr]
    methods = [m.message.get("method") for m in messages[:-1]]
    assert "notifications/progress" in methods and "notifications/message" in methods
    assert (
        messages[-1].message["id"] == 5
        and messages[-1].message["result"]["content"][0]["text"] == "counted 2 steps"
    )


async def test_older_sessions_get_no_priming_event(live: LiveServer, client: httpx.AsyncClient) -> None:
    session_id = await open_session(client, live.url, "2025-06-18")
    headers = session_headers(session_id, "2025-06-18")
    async with client.stream("POST", live.url, headers=headers, json=countdown(6)) as response:
        events = await collect(response)
    assert all(e.data for e in events if not e.comments), "an empty data field would crash older clients"
    assert events[-1].message["id"] == 6


async def test_second_get_stream_in_a_session_gets_409_until_the_first_closes(
    live: LiveServer, client: httpx.AsyncClient
) -> None:
    session_id = await open_session(client, live.url)
    async with client.stream("GET", live.url, headers=get_headers(session_id)) as first:
        assert first.status_code == 200 and first.headers["content-type"] == "text/event-stream"
        second = await client.get(live.url, headers=get_headers(session_id))
        assert second.status_code == 409
        assert second.json()["error"]["code"] == -32600
    async with asyncio.timeout(5):
        while True:  # the claim is released once the server notices the first stream is gone
            async with client.stream("GET", live.url, headers=get_headers(session_id)) as third:
                if third.status_code == 200:
                    break
                assert third.status_code == 409
            await asyncio.sleep(0.05)


async def test_get_stream_has_sse_headers_and_sends_keepalive_comments(
    live: LiveServer, client: httpx.AsyncClient
) -> None:
    session_id = await open_session(client, live.url)
    async with client.stream("GET", live.url, headers=get_headers(session_id)) as response:
        assert response.headers["content-type"] == "text/event-stream"
        assert response.headers["cache-control"] == "no-cache"
        assert response.headers["x-accel-buffering"] == "no"
        async with asyncio.timeout(5):
            async for event in sse_events(response):
                if event.comments:
                    break


async def test_delete_closes_the_sessions_open_get_stream(
    live: LiveServer, client: httpx.AsyncClient
) -> None:
    session_id = await open_session(client, live.url)
    async with client.stream("GET", live.url, headers=get_headers(session_id)) as response:
        assert response.status_code == 200
        deleted = await client.delete(live.url, headers=session_headers(session_id))
        assert deleted.status_code == 200
        await collect(response, limit=5)  # ends instead of running until the timeout


async def test_a_waiting_post_stream_gets_keepalives_and_ends_with_retry_when_the_session_ends(
    live: LiveServer, client: httpx.AsyncClient
) -> None:
    # The handler waits for the client's sampling answer: its stream stays open, kept alive by
    # comments; DELETE ends it from the server side, so a retry field comes before the close
    # ([11] "Resumability"; the session is gone, so a resume would get 404).
    session_id = await open_session(client, live.url)
    call = request(9, "tools/call", {"name": "ask_llm", "arguments": {"prompt": "2+2?"}})
    async with client.stream("POST", live.url, headers=session_headers(session_id), json=call) as response:
        assert response.headers["content-type"] == "text/event-stream"
        events = sse_events(response)
        assert (await anext(events)).is_priming
        async with asyncio.timeout(5):
            async for event in events:
                if event.data:
                    assert event.message["method"] == "sampling/createMessage"
                elif event.comments:
                    break
        deleted = await client.delete(live.url, headers=session_headers(session_id))
        assert deleted.status_code == 200
        async with asyncio.timeout(5):
            rest = [event async for event in events]
    assert rest and rest[-1].retry is not None and not any(e.data for e in rest)


async def test_concurrent_posts_in_one_session_all_get_their_answers(
    live: LiveServer, client: httpx.AsyncClient
) -> None:
    session_id = await open_session(client, live.url)
    headers = session_headers(session_id)

    async def echo(n: int) -> str:
        body = request(n, "tools/call", {"name": "echo", "arguments": {"message": f"m{n}"}})
        response = await client.post(live.url, headers=headers, json=body)
        assert response.json()["id"] == n
        text: str = response.json()["result"]["content"][0]["text"]
        return text

    async with asyncio.timeout(10):
        results = await asyncio.gather(*(echo(n) for n in range(8)))
    assert results == [f"m{n}" for n in range(8)]


async def _call_ask_llm_and_drop(client: httpx.AsyncClient, url: str, session_id: str) -> list[SSEEvent]:
    """POST ask_llm, read up to and including the sampling request, then drop the connection."""
    body = request(11, "tools/call", {"name": "ask_llm", "arguments": {"prompt": "hi"}})
    seen: list[SSEEvent] = []
    async with client.stream("POST", url, headers=session_headers(session_id), json=body) as response:
        async with asyncio.timeout(10):
            async for event in sse_events(response):
                seen.append(event)
                if event.data and event.message.get("method") == "sampling/createMessage":
                    break
    return seen


async def test_dropped_stream_is_resumed_with_last_event_id_after_the_client_answers(
    live: LiveServer, client: httpx.AsyncClient
) -> None:
    session_id = await open_session(client, live.url)
    seen = await _call_ask_llm_and_drop(client, live.url, session_id)
    sampling = seen[-1]
    assert sampling.id is not None
    answer = {
        "jsonrpc": "2.0",
        "id": sampling.message["id"],
        "result": {"role": "assistant", "content": {"type": "text", "text": "pong"}, "model": "m"},
    }
    posted = await client.post(live.url, headers=session_headers(session_id), json=answer)
    assert posted.status_code == 202
    async with client.stream("GET", live.url, headers=get_headers(session_id, sampling.id)) as response:
        assert response.status_code == 200
        events = [e for e in await collect(response) if e.data]
    assert [e.message.get("id") for e in events] == [11]
    assert events[0].message["result"]["content"][0]["text"] == "LLM response: pong"


async def test_resume_from_the_priming_event_replays_exactly_that_streams_events(
    live: LiveServer, client: httpx.AsyncClient
) -> None:
    session_id = await open_session(client, live.url)
    async with client.stream(
        "POST", live.url, headers=session_headers(session_id), json=countdown(21, 3)
    ) as response:
        original = [e for e in await collect(response) if e.id]
    priming = original[0]
    assert priming.is_priming
    # Another stream of the same session must not leak into the replay.
    async with client.stream("POST", live.url, headers=session_headers(session_id), json=countdown(22, 1)):
        pass
    async with client.stream("GET", live.url, headers=get_headers(session_id, priming.id)) as response:
        replayed = [e for e in await collect(response) if e.data]
    assert [(e.id, e.data) for e in replayed] == [(e.id, e.data) for e in original[1:]]
    assert replayed[-1].message["id"] == 21


async def test_unknown_or_foreign_last_event_id_gets_400(live: LiveServer, client: httpx.AsyncClient) -> None:
    session_id = await open_session(client, live.url)
    other = await open_session(client, live.url)
    async with client.stream(
        "POST", live.url, headers=session_headers(other), json=countdown(31)
    ) as response:
        foreign = [e for e in await collect(response) if e.id][-1].id
    assert foreign is not None
    for bad in ("garbage", "nostream.5", foreign):
        response = await client.get(live.url, headers=get_headers(session_id, bad))
        assert response.status_code == 400, bad
        assert response.json()["error"]["code"] == -32600 and response.json()["id"] is None


async def test_sampling_without_the_client_capability_is_a_clear_error(
    live: LiveServer, client: httpx.AsyncClient
) -> None:
    session_id = await open_session(client, live.url, capabilities={})
    body = request(41, "tools/call", {"name": "ask_llm", "arguments": {"prompt": "hi"}})
    response = await client.post(live.url, headers=session_headers(session_id), json=body)
    assert response.status_code == 200
    text = response.text
    assert "sampling" in text and ("isError" in text or "error" in response.json())


async def test_client_error_reply_to_sampling_reaches_the_handler(
    live: LiveServer, client: httpx.AsyncClient
) -> None:
    session_id = await open_session(client, live.url)
    body = request(51, "tools/call", {"name": "ask_llm", "arguments": {"prompt": "hi"}})
    async with client.stream("POST", live.url, headers=session_headers(session_id), json=body) as response:
        async with asyncio.timeout(10):
            events = sse_events(response)
            async for event in events:
                if event.data and event.message.get("method") == "sampling/createMessage":
                    refusal = {
                        "jsonrpc": "2.0",
                        "id": event.message["id"],
                        "error": {"code": -1, "message": "User rejected"},
                    }
                    posted = await client.post(live.url, headers=session_headers(session_id), json=refusal)
                    assert posted.status_code == 202
                elif event.data and event.message.get("id") == 51:
                    final = event.message
                    break
    assert "error" in final or final["result"].get("isError") is True


async def test_2024_11_05_client_is_served_over_streamable_http(
    live: LiveServer, client: httpx.AsyncClient
) -> None:
    session_id = await open_session(client, live.url, "2024-11-05")
    headers = session_headers(session_id, "")  # 2024-11-05 clients send no MCP-Protocol-Version
    async with client.stream("POST", live.url, headers=headers, json=countdown(61)) as response:
        events = [e for e in await collect(response) if e.data]
    progress = [e.message["params"] for e in events if e.message.get("method") == "notifications/progress"]
    assert progress and all("message" not in p for p in progress)  # progress message is 2025-03-26+
    assert events[-1].message["id"] == 61
