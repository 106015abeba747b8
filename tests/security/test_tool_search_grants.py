"""Issue 41: tool search never widens what a caller may reach.

The attacker holds a key scoped to some tools on a virtual server that selects some tools; the
server is in search mode. Whatever they search for, ``search_tools`` answers only tools of the
selection ∩ grant; whatever they name, ``call_tool`` of a tool outside it is the unknown-tool error,
exactly as a direct ``tools/call`` of a tool that does not exist (nothing tells them it exists).
Checked for random selections, grants and queries (hypothesis), in both eras.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_protocol.auth import principal as caller
from mcp_protocol.auth.principal import Grant, Principal
from mcp_protocol.context import Context
from mcp_protocol.definitions import Tool
from mcp_protocol.endpoint_servers import endpoint_server
from mcp_protocol.endpoints import EndpointSpec, Selection, ToolSearch
from mcp_protocol.jsonrpc import Request
from mcp_protocol.memory_provider import MemoryProvider
from mcp_protocol.server import Server
from tests.unit.protocol.conftest import RecordingOutbound, initialized, make_server, modern_meta

WORDS = ["send", "email", "delete", "account", "weather", "invoice", "user", "file", "read", "write"]
NAMES = [f"{a}_{b}" for a, b in zip(WORDS, reversed(WORDS), strict=True)]


async def _ran(args: dict[str, Any], ctx: Context) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": "ran"}]}


def _tool(name: str) -> Tool:
    a, b = name.split("_")
    return Tool(name, {"type": "object"}, description=f"{a} the {b} and more {a} {b}")


BASE = make_server(MemoryProvider(tools=[(_tool(n), _ran) for n in NAMES]))


def _server(selected: frozenset[str]) -> Server:
    return endpoint_server(BASE, EndpointSpec(slug="s", name="s", selection=Selection.of(tools=selected),
                                              tool_search=ToolSearch("on")))


async def _ask(server: Server, modern: bool, params: dict[str, Any]) -> dict[str, Any]:
    request = Request(1, "tools/call", {**params, "_meta": modern_meta()} if modern else params)
    if modern:
        response = await server.handle_stateless(request, RecordingOutbound(), "attacker")
    else:
        response = await server.handle(request, await initialized(server), RecordingOutbound())
    assert response is not None
    return response


async def _attack(selected: frozenset[str], granted: frozenset[str], query: str, modern: bool) -> None:
    server = _server(selected)
    token = caller.bind(Principal("key:attacker", grant=Grant.of(tools=granted)))
    try:
        reachable = selected & granted
        search = {"name": "search_tools", "arguments": {"query": query, "limit": 50}}
        found = await _ask(server, modern, search)
        names = {t["name"] for t in found["result"]["structuredContent"]["tools"]}
        assert names <= reachable, (names - reachable, query)
        for name in NAMES:
            wrapped = await _ask(server, modern, {"name": "call_tool", "arguments": {"name": name}})
            if name in reachable:
                assert wrapped["result"]["content"][0]["text"] == "ran"
                continue
            direct = await _ask(server, modern, {"name": name, "arguments": {}})
            missing = await _ask(server, modern, {"name": "no_such_tool", "arguments": {}})
            assert wrapped["error"] == direct["error"]
            assert wrapped["error"]["code"] == missing["error"]["code"] == -32602
            assert wrapped["error"]["message"] == f"Unknown tool: {name}"
    finally:
        caller.unbind(token)


subsets = st.frozensets(st.sampled_from(NAMES), max_size=len(NAMES))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(selected=subsets, granted=subsets, query=st.lists(st.sampled_from(WORDS), min_size=1, max_size=4),
       modern=st.booleans())
def test_search_and_call_tool_stay_within_selection_and_grant(
    selected: frozenset[str], granted: frozenset[str], query: list[str], modern: bool
) -> None:
    asyncio.run(_attack(selected, granted, " ".join(query), modern))


def test_every_word_of_every_tool_finds_nothing_outside_a_one_tool_grant() -> None:
    asyncio.run(_attack(frozenset(NAMES), frozenset({NAMES[0]}), " ".join(WORDS), False))


# -- SEP-2564's filter: never more than the view, never a regex bomb --------------------------------
async def _filtered(granted: frozenset[str], filter_: Any) -> dict[str, Any]:
    server = make_server(MemoryProvider(tools=[(_tool(n), _ran) for n in NAMES]), list_filter=True)
    session = await initialized(server)
    token = caller.bind(Principal("key:attacker", grant=Grant.of(tools=granted)))
    try:
        response = await server.handle(Request(1, "tools/list", {"filter": filter_}), session,
                                       RecordingOutbound())
    finally:
        caller.unbind(token)
    assert response is not None
    return response


@settings(max_examples=30, deadline=None)
@given(granted=subsets, patterns=st.lists(st.text(alphabet="*?_abcdefghilnorstuvwy[]", min_size=1,
                                                  max_size=12), max_size=5))
def test_a_filtered_list_never_shows_a_tool_outside_the_grant(
    granted: frozenset[str], patterns: list[str]
) -> None:
    response = asyncio.run(_filtered(granted, {"namePatterns": patterns}))
    assert {t["name"] for t in response["result"]["tools"]} <= granted


def test_hostile_patterns_are_matched_in_linear_time_or_refused() -> None:
    started = time.perf_counter()
    bomb = ["*a" * 127 + "*"] + ["*s" * 120 + f"?*x{i}" for i in range(99)]
    response = asyncio.run(_filtered(frozenset(NAMES), {"namePatterns": bomb}))
    assert "result" in response and time.perf_counter() - started < 5.0
    too_many = asyncio.run(_filtered(frozenset(NAMES), {"namePatterns": ["*"] * 101}))
    assert too_many["error"]["code"] == -32602
    too_long = asyncio.run(_filtered(frozenset(NAMES), {"namePatterns": ["*" * 257]}))
    assert too_long["error"]["code"] == -32602
