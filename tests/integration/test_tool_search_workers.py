"""Issue 41 end to end: tool search served by two worker processes (A and B) sharing one PostgreSQL
database and one private Redis, the demo registry loaded, its ``docs`` server (what is tagged
``docs``) switched to search mode.

Each worker searches its own snapshot (no database on the search path): a tool created tagged
``docs`` (a shell save, published on the bus) is found by ``search_tools`` on ``/mcp/docs`` on both
workers within the fan-out time, a 2026-07-28 stateless client on A and a 2025-11-25 session on B,
and ``call_tool`` runs it; ``tools/list`` shows the meta-tools and the tool pinned as always loaded.
"""

from __future__ import annotations

import asyncio
import importlib.util
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from tests.support import REGISTRY_PROVIDER, LiveServer
from tests.support.fleets import Fleet, running_fleet
from tests.support.mcp_http import modern_headers, modern_message, open_session, request, session_headers
from tests.support.postgres import temporary_database
from tests.support.private_redis import have_redis_server

pytestmark = [
    pytest.mark.timeout(120),
    pytest.mark.skipif(not have_redis_server(), reason="needs redis-server and redis-cli"),
    pytest.mark.skipif(importlib.util.find_spec("mcp_protocol.methods.tool_search") is None,
                       reason="needs the core's tool search (issue 41)"),
]
WAIT = 10.0  # s: the fan-out deadline (a change reaches every worker well within it)
SEARCH_DOCS = ("from registry.models import VirtualServer; s = VirtualServer.objects.get(slug='docs'); "
               "s.tool_search = 'on'; s.save()")
ADD_TOOL = ("from registry.models import Tool; Tool.objects.create(name='summarize_invoice', "
            "description='Summarize a customer invoice', kind='template', template_text='done', "
            "input_schema={'type': 'object', 'properties': {}}, tags=['docs'], always_load=True)")
FIND = {"name": "search_tools", "arguments": {"query": "customer invoice"}}


@dataclass
class Pair:
    fleet: Fleet
    a: LiveServer
    b: LiveServer


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pair]:
    with (
        temporary_database("mcpsite_tool_search") as database_url,
        running_fleet(tmp_path_factory.mktemp("redis"), provider=REGISTRY_PROVIDER,
                      database_url=database_url) as fleet,
    ):
        fleet.migrate()
        fleet.manage("load_demo")
        fleet.manage("shell", "-c", SEARCH_DOCS)
        a, b = fleet.start(2)
        yield Pair(fleet, a, b)


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=WAIT) as c:
        yield c


async def _modern(client: httpx.AsyncClient, url: str, method: str, params: dict[str, Any]) -> Any:
    message = modern_message(1, method, params)
    reply = await client.post(url, json=message, headers=modern_headers(message))
    assert reply.status_code == 200, reply.text
    return reply.json()["result"]


async def _legacy(
    client: httpx.AsyncClient, url: str, session: str, method: str, params: dict[str, Any]
) -> Any:
    reply = await client.post(url, json=request(2, method, params), headers=session_headers(session))
    assert reply.status_code == 200, reply.text
    return reply.json()["result"]


def _found(result: dict[str, Any]) -> list[str]:
    return [tool["name"] for tool in result["structuredContent"]["tools"]]


async def test_a_new_tool_is_found_by_search_on_both_workers_within_the_fan_out_time(
    pair: Pair, client: httpx.AsyncClient
) -> None:
    url_a, url_b = f"{pair.a.base_url}/mcp/docs", f"{pair.b.base_url}/mcp/docs"
    session = await open_session(client, url_b)
    listed = await _modern(client, url_a, "tools/list", {})
    assert [t["name"] for t in listed["tools"]][:2] == ["search_tools", "call_tool"]
    assert "summarize_invoice" not in _found(await _modern(client, url_a, "tools/call", FIND))
    await asyncio.to_thread(pair.fleet.manage, "shell", "-c", ADD_TOOL)
    deadline = time.monotonic() + WAIT
    seen: set[str] = set()
    while seen != {"a", "b"}:
        assert time.monotonic() < deadline, f"found on {seen or 'no worker'} only after {WAIT} s"
        if "summarize_invoice" in _found(await _modern(client, url_a, "tools/call", FIND)):
            seen.add("a")
        if "summarize_invoice" in _found(await _legacy(client, url_b, session, "tools/call", FIND)):
            seen.add("b")
        await asyncio.sleep(0.1)
    # Pinned: listed beside the meta-tools, with its _meta; and call_tool runs it on either worker.
    listed = await _legacy(client, url_b, session, "tools/list", {})
    pinned = [t for t in listed["tools"] if t["name"] == "summarize_invoice"]
    assert pinned and pinned[0]["_meta"] == {"anthropic/alwaysLoad": True}
    ran = await _modern(client, url_a, "tools/call", {"name": "call_tool",
                                                      "arguments": {"name": "summarize_invoice"}})
    assert ran["content"][0]["text"] == "done"
