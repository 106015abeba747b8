"""The deprecated HTTP+SSE transport (2024-11-05 basic/transports.mdx "HTTP with SSE") for old
clients: ``GET /sse`` sends the ``endpoint`` event, ``POST /messages?session_id=…`` carries the
client's messages, answers come on the SSE stream.

The official ``mcp`` SDK SSE client tours a real uvicorn worker; then two workers sharing a private
Redis, with the client's POSTs alternating between them while its SSE stream stays on worker A
(an httpx transport that re-targets every POST), so answers, sampling and elicitation cross
workers through the event store and the bus. Raw httpx for the header-level rules.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from mcp import types
from mcp.client.session import ClientSession
from mcp.client.sse import sse_client

from tests.support import MEMORY_PROVIDER, LiveServer, live_server_fixture
from tests.support.mcp_http import POST_HEADERS, sse_events
from tests.support.private_redis import PrivateRedis, have_redis_server

pytestmark = [
    pytest.mark.timeout(60),
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]
live = live_server_fixture(provider=MEMORY_PROVIDER)


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveServer, LiveServer]]:
    if not have_redis_server():
        pytest.skip("needs redis-server")
    redis_server = PrivateRedis(tmp_path_factory.mktemp("redis")).start()
    env = {"REDIS_URL": redis_server.url, "MCP_KEY_PREFIX": "legacy-sse", "MCP_PROVIDER": MEMORY_PROVIDER}
    a, b = LiveServer(env=env), LiveServer(env=env)
    try:
        a.start()
        b.start()
        yield a, b
    finally:
        a.stop()
        b.stop()
        redis_server.stop()


class AlternatePosts(httpx2.AsyncHTTPTransport):
    """Sends each POST to the next of ``ports`` in turn; the SSE GET goes where it was addressed."""

    def __init__(self, ports: list[int]) -> None:
        super().__init__()
        self.ports = itertools.cycle(ports)
        self.posted_to: list[int] = []

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        if request.method == "POST":
            port = next(self.ports)
            self.posted_to.append(port)
            request.url = request.url.copy_with(port=port)
        return await super().handle_async_request(request)


async def on_sampling(context: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
    return types.CreateMessageResult(
        role="assistant",
        content=types.TextContent(type="text", text="four"),
        model="m",
        stop_reason="endTurn",
    )


async def on_elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"username": "ada"})


async def on_roots(context: Any) -> types.ListRootsResult:
    return types.ListRootsResult(roots=[types.Root(uri="file:///work/project", name="project")])


@asynccontextmanager
async def connect(
    url: str, transport: httpx2.AsyncBaseTransport | None = None
) -> AsyncIterator[ClientSession]:
    def factory(headers: Any = None, timeout: Any = None, auth: Any = None) -> httpx2.AsyncClient:
        return httpx2.AsyncClient(headers=headers, timeout=timeout, auth=auth, transport=transport)

    logs: list[Any] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params.data)

    async with sse_client(url, httpx_client_factory=factory) as (read, write):
        async with ClientSession(
            read,
            write,
            sampling_callback=on_sampling,
            elicitation_callback=on_elicit,
            list_roots_callback=on_roots,
            logging_callback=on_log,
        ) as session:
            with anyio.fail_after(30):
                yield session


async def tour(session: ClientSession) -> None:
    init = await session.initialize()
    assert init.server_info.name == "mcpsite"
    tools = await session.list_tools()
    assert {"echo", "add", "ask_llm", "ask_user", "list_roots"} <= {t.name for t in tools.tools}
    echoed = await session.call_tool("echo", {"message": "over sse"})
    assert echoed.content[0].text == "over sse"  # type: ignore[union-attr]
    progress: list[float] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    counted = await session.call_tool("countdown", {"steps": 2}, progress_callback=on_progress)
    assert counted.content[0].text == "counted 2 steps" and progress == [1, 2]  # type: ignore[union-attr]
    sampled = await session.call_tool("ask_llm", {"prompt": "2+2?"})
    assert sampled.content[0].text == "LLM response: four"  # type: ignore[union-attr]
    asked = await session.call_tool("ask_user", {"message": "Who are you?"})
    assert asked.content[0].text == "User response: accept, {'username': 'ada'}"  # type: ignore[union-attr]
    roots = await session.call_tool("list_roots", {})
    assert roots.content[0].text == "project: file:///work/project"  # type: ignore[union-attr]
    read = await session.read_resource("demo://readme")
    assert "mcpsite demo server" in read.contents[0].text  # type: ignore[union-attr]
    prompt = await session.get_prompt("greet", {"name": "Ada"})
    assert "Ada" in prompt.messages[0].content.text  # type: ignore[union-attr]
    await session.send_ping()


async def test_sdk_sse_client_does_the_tour_on_one_worker(live: LiveServer) -> None:
    async with connect(f"{live.base_url}/sse") as session:
        await tour(session)


async def test_sdk_sse_client_does_the_tour_with_posts_on_two_workers(
    pair: tuple[LiveServer, LiveServer],
) -> None:
    a, b = pair
    transport = AlternatePosts([b.port, a.port])
    async with connect(f"{a.base_url}/sse", transport) as session:
        await tour(session)
    assert {a.port, b.port} <= set(transport.posted_to)


async def test_the_first_event_is_endpoint_and_answers_come_on_the_stream(live: LiveServer) -> None:
    async with httpx.AsyncClient(timeout=10) as client:
        async with client.stream("GET", f"{live.base_url}/sse", headers={"accept": "text/event-stream"}) as r:
            assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
            events = sse_events(r)
            first = await anext(events)
            assert first.event == "endpoint" and first.data.startswith("messages?session_id=")
            post_url = str(httpx.URL(f"{live.base_url}/sse").join(first.data))
            ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
            posted = await client.post(post_url, headers=POST_HEADERS, json=ping)
            assert posted.status_code == 202
            async for event in events:
                if event.data:
                    assert event.event in (None, "message") and event.message == {
                        "jsonrpc": "2.0",
                        "id": 1,
                        "result": {},
                    }
                    break


async def test_bad_origin_and_unknown_session_are_refused(live: LiveServer) -> None:
    async with httpx.AsyncClient(timeout=10) as client:
        evil = {"accept": "text/event-stream", "origin": "http://evil.example.com"}
        assert (await client.get(f"{live.base_url}/sse", headers=evil)).status_code == 403
        ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
        unknown = await client.post(
            f"{live.base_url}/messages?session_id=nope", headers=POST_HEADERS, json=ping
        )
        assert unknown.status_code == 404 and unknown.json()["id"] == 2
        missing = await client.post(f"{live.base_url}/messages", headers=POST_HEADERS, json=ping)
        assert missing.status_code == 400


async def read_tcp_chunks_until(reader: asyncio.StreamReader, needle: bytes, seconds: float) -> list[bytes]:
    """What each read of the socket returned (HTTP framing included), until ``needle`` arrives."""
    chunks: list[bytes] = []
    async with asyncio.timeout(seconds):
        while not chunks or needle not in chunks[-1]:
            chunk = await reader.read(65536)
            assert chunk, "the server closed the stream"
            chunks.append(chunk)
    return chunks


async def test_a_requests_last_progress_and_its_result_come_in_separate_reads(live: LiveServer) -> None:
    """The TypeScript SDK 1.x drops a progress notification that arrives in the same read as its
    request's result (typescript-sdk #2580): on the raw TCP stream of /sse, every progress comes
    in a read before the one that carries the result."""
    reader, writer = await asyncio.open_connection(live.host, live.port)
    try:
        opening_request = (
            f"GET /sse HTTP/1.1\r\nHost: {live.host}:{live.port}\r\naccept: text/event-stream\r\n\r\n"
        )
        writer.write(opening_request.encode())
        opening = b"".join(await read_tcp_chunks_until(reader, b"session_id=", 10))
        session_id = opening.split(b"session_id=")[1].split(b"\n")[0].decode()
        post_url = f"{live.base_url}/messages?session_id={session_id}"
        hello = {
            "protocolVersion": "2024-11-05",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"},
        }
        async with httpx.AsyncClient(timeout=10) as client:
            for message in (
                {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
                {"jsonrpc": "2.0", "method": "notifications/initialized"},
            ):
                assert (await client.post(post_url, headers=POST_HEADERS, json=message)).status_code == 202
            await read_tcp_chunks_until(reader, b'"id":1', 10)
            for request_id, steps in ((2, 3), (3, 1)):
                call = {
                    "jsonrpc": "2.0",
                    "id": request_id,
                    "method": "tools/call",
                    "params": {
                        "name": "countdown",
                        "arguments": {"steps": steps},
                        "_meta": {"progressToken": f"p{request_id}"},
                    },
                }
                assert (await client.post(post_url, headers=POST_HEADERS, json=call)).status_code == 202
                chunks = await read_tcp_chunks_until(reader, f'"id":{request_id}'.encode(), 10)
                progress = [
                    i for i, chunk in enumerate(chunks) for _ in range(chunk.count(b"notifications/progress"))
                ]
                assert len(progress) == steps, chunks
                assert progress[-1] < len(chunks) - 1, (
                    f"the last progress came with the result: {chunks[-1]!r}"
                )
                assert b"notifications/progress" not in chunks[-1]
    finally:
        writer.close()
