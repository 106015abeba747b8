"""Tool search from the settings (issue 41): ``MCP["TOOL_SEARCH"]`` puts the catch-all ``/mcp`` in
search mode, a virtual server's spec puts its own endpoint in it, ``MCP["TOOLS_LIST_FILTER"]``
serves SEP-2564's filter, each search is counted per server (never its query), and the settings
are checked at startup."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from django.test import override_settings

from mcp_django.checks import check_mcp_settings
from mcp_django.conf import mcp_settings
from mcp_django.service import get_service
from mcp_protocol.endpoints import EndpointSpec, Selection, ToolSearch
from mcp_protocol.transports import metrics
from tests.support.asgi_call import MEMORY_MCP, call
from tests.support.virtual_servers import project, rpc, session_on

MAIL = EndpointSpec(slug="mail", name="mail", selection=Selection.of(tools={"echo", "add"}),
                    tool_search=ToolSearch("on", search_tool="find"))


@pytest.fixture
async def served() -> AsyncIterator[None]:
    with override_settings(MCP={**MEMORY_MCP, "TOOL_SEARCH": "on", "TOOLS_LIST_FILTER": True}):
        mcp_settings.backend("PROVIDER").set_endpoints([MAIL])
        try:
            yield
        finally:
            await get_service().shutdown()


def calls_of(tool: str) -> int:
    """``mcp_tool_calls_total`` of ``tool`` (ok and error) not yet flushed to /metrics."""
    return sum(n for (name, _), n in metrics._tally.tool_calls.items() if name == tool)


def searches(server: str) -> float:
    value = metrics.TOOL_SEARCHES.labels(server)._value.get()
    return float(value)


async def test_the_catch_all_and_a_virtual_server_serve_their_own_mode(served: None) -> None:
    app = project()
    initialized, headers = await session_on(app, "/mcp")
    capabilities = initialized.json()["result"]["capabilities"]
    assert capabilities["tools"]["filtering"] == {"supported": ["namePatterns"]}
    listed = (await call(app, rpc("tools/list"), headers, path="/mcp")).messages()[0]["result"]
    assert [t["name"] for t in listed["tools"]] == ["search_tools", "call_tool"]
    _, mail = await session_on(app, "/mcp/mail")
    listed = (await call(app, rpc("tools/list"), mail, path="/mcp/mail")).messages()[0]["result"]
    assert [t["name"] for t in listed["tools"]] == ["find", "call_tool"]
    before = searches("mail"), searches("")
    query = {"name": "find", "arguments": {"query": "echo back a message"}}
    found = await call(app, rpc("tools/call", query), mail, path="/mcp/mail")
    names = [t["name"] for t in found.messages()[0]["result"]["structuredContent"]["tools"]]
    assert "echo" in names and set(names) <= {"echo", "add"}
    assert (searches("mail"), searches("")) == (before[0] + 1, before[1])
    # mcp_tool_calls_total: a call_tool call counts as the tool it wraps, search_tools as itself.
    counted = calls_of("echo"), calls_of("call_tool"), calls_of("find"), calls_of("unknown")
    wrapped = {"name": "call_tool", "arguments": {"name": "echo", "arguments": {"message": "hi"}}}
    echoed = await call(app, rpc("tools/call", wrapped), mail, path="/mcp/mail")
    assert echoed.messages()[0]["result"]["content"][0]["text"] == "hi"
    after = calls_of("echo"), calls_of("call_tool"), calls_of("find"), calls_of("unknown")
    assert after == (counted[0] + 1, counted[1], counted[2], counted[3])
    assert counted[2] >= 1  # the search above
    only = {"filter": {"namePatterns": ["call_*"]}}
    filtered = await call(app, rpc("tools/list", only), headers, path="/mcp")
    assert [t["name"] for t in filtered.messages()[0]["result"]["tools"]] == ["call_tool"]


@pytest.mark.parametrize(("settings", "ids"), [
    ({"TOOL_SEARCH": "auto", "TOOL_SEARCH_THRESHOLD": 0}, []),
    ({"TOOL_SEARCH": "sometimes"}, ["mcp.E016"]),
    ({"TOOL_SEARCH_THRESHOLD": -1}, ["mcp.E006"]),
    ({"TOOL_SEARCH_THRESHOLD": True}, ["mcp.E006"]),
])
def test_the_tool_search_settings_are_checked(settings: dict[str, Any], ids: list[str]) -> None:
    with override_settings(MCP=settings):
        assert [m.id for m in check_mcp_settings() if m.id in ("mcp.E016", "mcp.E006")] == ids
