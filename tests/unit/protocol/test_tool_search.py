"""Tool search served (issue 41 items 2, 3 and 6): in search mode tools/list shows the meta-tools
and the pinned tools, search_tools ranks the caller's view only, call_tool is a direct call in
every respect (grant, audit, rate limits), in both eras, and ``auto`` switches on above its
threshold."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

from mcp_protocol.auth import principal as caller
from mcp_protocol.auth.audit import AuditEntry, AuditQueue, AuditSink
from mcp_protocol.auth.guard import Guard
from mcp_protocol.auth.limits import MemoryRateLimiter
from mcp_protocol.auth.principal import Grant, Principal, Rate
from mcp_protocol.context import Context
from mcp_protocol.definitions import Tool
from mcp_protocol.endpoint_servers import endpoint_server
from mcp_protocol.endpoints import EndpointSpec, Selection, ToolSearch
from mcp_protocol.jsonrpc import Request
from mcp_protocol.memory_provider import MemoryProvider
from mcp_protocol.methods.tool_search import PIN
from mcp_protocol.server import Server
from mcp_protocol.session import Session

from .conftest import RecordingOutbound, call, initialized, make_server, modern_meta

OBJECT = {"type": "object", "properties": {"text": {"type": "string", "description": "The content."}}}


async def _reply(args: dict[str, Any], ctx: Context) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": f"sent {args.get('text', '')}"}]}


TOOLS = [
    Tool("send_email", OBJECT, description="Send an email message to a recipient."),
    Tool("send_sms", OBJECT, description="Send a text message to a phone."),
    Tool("weather", OBJECT, description="Today's weather forecast for a city.",
         meta={"vendor/x": 1, PIN: True}),
    Tool("delete_account", OBJECT, description="Delete the user account and its email."),
]


def provider() -> MemoryProvider:
    return MemoryProvider(tools=[(tool, _reply) for tool in TOOLS])


def server(mode: str = "on", threshold: int = 50, **kwargs: Any) -> Server:
    return make_server(provider(), tool_search=ToolSearch(mode, threshold), **kwargs)


async def legacy(srv: Server, session: Session, method: str, params: dict[str, Any] | None = None) -> Any:
    return await call(srv, session, method, params)


async def modern(srv: Server, method: str, params: dict[str, Any] | None = None) -> Any:
    response = await srv.handle_stateless(
        Request(1, method, {**(params or {}), "_meta": modern_meta()}), RecordingOutbound(), "alice")
    assert response is not None
    return response


def names(response: dict[str, Any]) -> list[str]:
    return [tool["name"] for tool in response["result"]["tools"]]


def search_args(query: str, limit: int = 10) -> dict[str, Any]:
    return {"name": "search_tools", "arguments": {"query": query, "limit": limit}}


async def test_search_mode_lists_the_meta_tools_and_the_pinned_tools_in_both_eras() -> None:
    srv = server()
    session = await initialized(srv)
    listed = await legacy(srv, session, "tools/list")
    assert names(listed) == ["search_tools", "call_tool", "weather"]
    weather = listed["result"]["tools"][2]
    assert weather["_meta"] == {"vendor/x": 1, PIN: True}  # the tool's own _meta kept
    search = listed["result"]["tools"][0]
    assert "outputSchema" in search and "call_tool" in search["description"]
    assert names(await modern(srv, "tools/list")) == ["search_tools", "call_tool", "weather"]
    # Off: every tool, the pinned one still carries its _meta.
    off = server("off")
    listed = await legacy(off, await initialized(off), "tools/list")
    assert names(listed) == [t.name for t in TOOLS]
    assert listed["result"]["tools"][2]["_meta"][PIN] is True


async def test_search_returns_full_definitions_ranked_in_structured_and_text_content() -> None:
    srv = server()
    for response in (await legacy(srv, await initialized(srv), "tools/call", search_args("send email")),
                     await modern(srv, "tools/call", search_args("send email"))):
        result = response["result"]
        found = {t["name"]: t for t in result["structuredContent"]["tools"]}  # the ranking's order
        assert "send_email" in found and "send_sms" in found and "weather" not in found
        assert found["send_email"]["inputSchema"] == OBJECT
        assert found["send_email"]["description"].startswith("Send an email")
        assert "send_email" in result["content"][0]["text"]
        assert not result.get("isError")


async def test_before_2025_06_18_the_search_answer_is_text_only() -> None:
    srv = server()
    session = await initialized(srv, "2025-03-26")
    result = (await legacy(srv, session, "tools/call", search_args("weather")))["result"]
    assert "structuredContent" not in result and '"weather"' in result["content"][0]["text"]


async def test_call_tool_runs_the_named_tool_and_a_direct_call_works_too() -> None:
    srv = server()
    session = await initialized(srv)
    wrapped = {"name": "call_tool", "arguments": {"name": "send_sms", "arguments": {"text": "hi"}}}
    assert (await legacy(srv, session, "tools/call", wrapped))["result"]["content"][0]["text"] == "sent hi"
    assert (await modern(srv, "tools/call", wrapped))["result"]["content"][0]["text"] == "sent hi"
    direct = {"name": "send_sms", "arguments": {"text": "yo"}}
    assert (await legacy(srv, session, "tools/call", direct))["result"]["content"][0]["text"] == "sent yo"


async def test_call_tool_of_an_unknown_name_is_the_unknown_tool_error_bad_arguments_a_tool_error() -> None:
    srv = server()
    session = await initialized(srv)
    direct = await legacy(srv, session, "tools/call", {"name": "nope", "arguments": {}})
    wrapped = await legacy(srv, session, "tools/call", {"name": "call_tool", "arguments": {"name": "nope"}})
    assert wrapped["error"] == direct["error"] and direct["error"]["code"] == -32602
    nested = {"name": "call_tool", "arguments": {"name": "call_tool", "arguments": {"name": "send_sms"}}}
    assert (await legacy(srv, session, "tools/call", nested))["error"]["message"] == "Unknown tool: call_tool"
    missing = await legacy(srv, session, "tools/call", {"name": "call_tool", "arguments": {}})
    assert missing["result"]["isError"] is True  # 2025-11-25: invalid arguments are a tool error
    empty = await legacy(srv, session, "tools/call", {"name": "search_tools", "arguments": {"query": ""}})
    assert empty["result"]["isError"] is True


async def test_meta_tools_do_not_exist_when_the_mode_is_off() -> None:
    srv = server("off")
    session = await initialized(srv)
    response = await legacy(srv, session, "tools/call", search_args("email"))
    assert response["error"]["code"] == -32602


async def test_auto_mode_switches_on_above_the_threshold_of_the_callers_view() -> None:
    above = server("auto", threshold=3)
    listed = names(await legacy(above, await initialized(above), "tools/list"))
    assert listed[:2] == ["search_tools", "call_tool"]
    at = server("auto", threshold=4)
    assert names(await legacy(at, await initialized(at), "tools/list")) == [t.name for t in TOOLS]
    # A key that sees two of the four tools stays under a threshold of 3: everything listed.
    session = await initialized(above)
    token = caller.bind(Principal("key:1", grant=Grant.of(tools=["send_sms", "weather"])))
    try:
        assert names(await legacy(above, session, "tools/list")) == ["send_sms", "weather"]
    finally:
        caller.unbind(token)


async def test_a_scoped_key_searches_and_calls_only_its_grant() -> None:
    srv = server()
    session = await initialized(srv)
    token = caller.bind(Principal("key:2", grant=Grant.of(tools=["send_sms"])))
    try:
        found = (await legacy(srv, session, "tools/call", search_args("send email delete account")))
        assert [t["name"] for t in found["result"]["structuredContent"]["tools"]] == ["send_sms"]
        assert names(await legacy(srv, session, "tools/list")) == ["search_tools", "call_tool"]
        refused = await legacy(srv, session, "tools/call",
                               {"name": "call_tool", "arguments": {"name": "send_email", "arguments": {}}})
        assert refused["error"] == {"code": -32602, "message": "Unknown tool: send_email",
                                    "data": {"name": "send_email"}}
    finally:
        caller.unbind(token)


async def test_a_virtual_servers_search_stays_within_its_selection() -> None:
    base = make_server(provider())
    spec = EndpointSpec(slug="mail", name="mail", selection=Selection.of(tools={"send_email", "send_sms"}),
                        tool_search=ToolSearch("on", search_tool="find", call_tool="run"))
    srv = endpoint_server(base, spec)
    session = await initialized(srv)
    assert names(await legacy(srv, session, "tools/list")) == ["find", "run"]  # weather is not selected
    found = await legacy(srv, session, "tools/call",
                         {"name": "find", "arguments": {"query": "delete account weather send"}})
    assert {t["name"] for t in found["result"]["structuredContent"]["tools"]} == {"send_email", "send_sms"}
    refused = await legacy(srv, session, "tools/call", {"name": "run", "arguments": {"name": "weather"}})
    assert refused["error"]["message"] == "Unknown tool: weather"


class ListSink(AuditSink):
    def __init__(self) -> None:
        super().__init__()
        self.entries: list[AuditEntry] = []

    async def write(self, entries: list[AuditEntry]) -> None:
        self.entries += entries


async def test_call_tool_is_audited_and_rate_limited_as_the_named_tool() -> None:
    srv = server()
    sink = ListSink()
    queue = AuditQueue(sink)
    srv.interceptor = Guard(MemoryRateLimiter(), tool_rates={"send_sms": Rate(1, 60.0)}, audit=queue)
    session = await initialized(srv)
    searches: list[str] = []
    srv.on_search = searches.append
    token = caller.bind(Principal("key:3"))
    try:
        wrapped = {"name": "call_tool", "arguments": {"name": "send_sms", "arguments": {"text": "a"}}}
        assert (await legacy(srv, session, "tools/call", wrapped))["result"]["content"][0]["text"] == "sent a"
        # The tool's bucket is spent: a direct call and a call_tool are refused alike.
        direct = await legacy(srv, session, "tools/call", {"name": "send_sms", "arguments": {"text": "b"}})
        again = await legacy(srv, session, "tools/call", wrapped)
        assert direct["result"]["isError"] and again["result"]["isError"]
        assert "Rate limit" in again["result"]["content"][0]["text"]
        await legacy(srv, session, "tools/call", search_args("weather"))
    finally:
        caller.unbind(token)
    await asyncio.wait_for(queue.close(), 5)
    entries = [(e.name, e.outcome, e.arguments) for e in sink.entries]
    assert entries[:3] == [("send_sms", "ok", {"text": "a"}), ("send_sms", "rate_limited", {"text": "b"}),
                           ("send_sms", "rate_limited", {"text": "a"})]
    assert searches == [""]  # counted per server (the catch-all's key), never the query


async def test_a_tool_added_to_the_snapshot_is_found_by_the_next_search() -> None:
    prov = provider()
    srv = make_server(prov, tool_search=ToolSearch("on"))
    session = await initialized(srv)
    assert (await legacy(srv, session, "tools/call", search_args("invoice")))["result"][
        "structuredContent"]["tools"] == []
    prov.add_tool(dataclasses.replace(TOOLS[0], name="create_invoice", description="Create an invoice."),
                  _reply)
    found = await legacy(srv, session, "tools/call", search_args("invoice"))
    assert [t["name"] for t in found["result"]["structuredContent"]["tools"]] == ["create_invoice"]


# -- SEP-2564's filter on tools/list (behind a setting) ---------------------------------------------
async def test_the_sep_2564_filter_narrows_tools_list_when_on_and_is_advertised() -> None:
    srv = make_server(provider(), list_filter=True, page_size=1)
    session = await initialized(srv)
    caps = srv.capabilities("2025-11-25")
    assert caps["tools"]["filtering"] == {"supported": ["namePatterns"]}
    first = await legacy(srv, session, "tools/list", {"filter": {"namePatterns": ["send_*", "weath?r"]}})
    assert names(first) == ["send_email"]
    cursor = first["result"]["nextCursor"]
    second = await legacy(srv, session, "tools/list",
                          {"filter": {"namePatterns": ["send_*", "weath?r"]}, "cursor": cursor})
    assert names(second) == ["send_sms"]
    changed = await legacy(srv, session, "tools/list", {"filter": {"namePatterns": ["*"]}, "cursor": cursor})
    assert changed["error"] == {"code": -32602,
                                "message": "Filter parameters must not change between paginated requests"}
    # {} and unknown fields: everything; bad shapes and limits: -32602.
    everything = await legacy(srv, session, "tools/list", {"filter": {"com.example/x": [1]}})
    assert names(everything) == ["send_email"] and "nextCursor" in everything["result"]
    for bad in ({"namePatterns": "send_*"}, {"namePatterns": [""]}, {"namePatterns": ["x" * 257]},
                {"namePatterns": [f"t{i}" for i in range(101)]}, "send_*"):
        refused = await legacy(srv, session, "tools/list", {"filter": bad})
        assert refused["error"]["code"] == -32602, bad
    # Literal brackets (the SEP's minimum syntax), and the modern era too.
    assert names(await legacy(srv, session, "tools/list", {"filter": {"namePatterns": ["[sw]*"]}})) == []
    assert names(await modern(srv, "tools/list", {"filter": {"namePatterns": ["weather"]}})) == ["weather"]


async def test_without_the_setting_a_filter_is_ignored_and_not_advertised() -> None:
    srv = server("off")
    assert "filtering" not in srv.capabilities("2025-11-25")["tools"]
    listed = await legacy(srv, await initialized(srv), "tools/list", {"filter": {"namePatterns": ["send_*"]}})
    assert names(listed) == [t.name for t in TOOLS]
