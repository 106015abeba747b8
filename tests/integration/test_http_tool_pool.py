"""A served http tool reuses the worker's pooled connection (issue 29 item 1), end to end: a real
uvicorn worker whose ASGI lifespan starts the runtime (and with it the registry's pooled session),
an MCP client calling the tool over /mcp, and the loopback upstream counting the connections it
was called on."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import httpx
import pytest

from tests.support.live_server import REGISTRY_PROVIDER, LiveServer
from tests.support.mcp_http import open_session, request, session_headers
from tests.support.upstream import Upstream


@pytest.fixture(scope="module")
def api() -> Iterator[Upstream]:
    with Upstream() as server:
        yield server


def test_calls_through_mcp_reuse_one_upstream_connection(api: Upstream) -> None:
    tool = {
        "name": "pooled",
        "kind": "http",
        "http_url": f"{api.url}/echo/pooled",
        "description": "d",
        "input_schema": {"type": "object", "properties": {"n": {"type": "integer"}}},
    }
    make = f"from registry.models import Tool; Tool.objects.create(**{tool!r})"
    env = {"MCP_PROVIDER": REGISTRY_PROVIDER, "MCP_AUTH": "open", "REGISTRY_HTTP_ALLOWED_HOSTS": "127.0.0.1"}

    async def calls(url: str) -> list[dict[str, object]]:
        async with httpx.AsyncClient(timeout=20) as client:
            session = await open_session(client, url)
            answers = []
            for n in range(5):
                message = request(n + 1, "tools/call", {"name": "pooled", "arguments": {"n": n}})
                answer = await client.post(url, headers=session_headers(session), json=message)
                answers.append(answer.json()["result"])
            return answers

    with LiveServer(env=env, load=[["shell", "-c", make]]) as server:
        results = asyncio.run(calls(server.url))
    assert [r["structuredContent"]["body"] for r in results] == [{"n": n} for n in range(5)]
    assert len({r.peer_port for r in api.requests}) == 1  # one kept-alive connection for five calls
