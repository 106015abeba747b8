"""A ``tools/call`` walks straight down (issue 36 item 7): through the guard (rate limits, audit)
and the handler it reads the caller once and finds its tool once, and a ``ToolError`` becomes its
``isError`` result in one place (the core's ``execute_tool``)."""

from __future__ import annotations

import asyncio
import contextvars
from typing import Any

import pytest

from mcp_protocol.auth import principal as caller
from mcp_protocol.auth.audit import AuditEntry, AuditQueue, AuditSink
from mcp_protocol.auth.guard import Guard
from mcp_protocol.auth.limits import MemoryRateLimiter
from mcp_protocol.auth.principal import Principal, Rate
from mcp_protocol.definitions import Snapshot
from mcp_protocol.jsonrpc import Request
from tests.unit.protocol.conftest import RecordingOutbound, initialized, make_server


class ListSink(AuditSink):
    def __init__(self) -> None:
        super().__init__()
        self.entries: list[AuditEntry] = []

    async def write(self, entries: list[AuditEntry]) -> None:
        self.entries += entries


class CountingVar:
    """The principal's context variable, counting its reads."""

    def __init__(self, var: contextvars.ContextVar[Principal]) -> None:
        self.var, self.reads = var, 0

    def get(self) -> Principal:
        self.reads += 1
        return self.var.get()

    def set(self, value: Principal) -> contextvars.Token[Principal]:
        return self.var.set(value)

    def reset(self, token: contextvars.Token[Principal]) -> None:
        self.var.reset(token)


async def guarded_call(monkeypatch: pytest.MonkeyPatch, name: str, arguments: dict[str, Any]) -> Any:
    server = make_server()
    queue = AuditQueue(ListSink())
    server.interceptor = Guard(MemoryRateLimiter(), rate=Rate(100, 1.0), tool_rate=Rate(100, 1.0),
                               max_in_flight=5, audit=queue)
    session = await initialized(server)
    var = CountingVar(caller._current)
    monkeypatch.setattr(caller, "_current", var)
    lookups: list[str] = []
    find = Snapshot.tool

    def counted(snapshot: Snapshot, tool: str) -> Any:
        lookups.append(tool)
        return find(snapshot, tool)

    monkeypatch.setattr(Snapshot, "tool", counted)
    token = caller.bind(Principal("key:7", rate=Rate(50, 1.0)))
    try:
        var.reads = 0
        response = await server.handle(Request(1, "tools/call", {"name": name, "arguments": arguments}),
                                       session, RecordingOutbound())
    finally:
        caller.unbind(token)
    await asyncio.wait_for(queue.close(), 5)
    return response, var.reads, lookups


async def test_a_guarded_and_audited_tool_call_reads_its_caller_once_and_finds_its_tool_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    response, reads, lookups = await guarded_call(monkeypatch, "echo", {"message": "hi"})
    assert response["result"]["content"][0]["text"] == "hi"
    assert reads == 1
    assert lookups == ["echo"]


async def test_a_tool_error_under_the_guard_is_one_error_result_found_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    response, reads, lookups = await guarded_call(monkeypatch, "fail", {"reason": "no luck"})
    assert response["result"] == {"content": [{"type": "text", "text": "no luck"}], "isError": True}
    assert reads == 1 and lookups == ["fail"]
