"""Rate limits, the in-flight cap and the audit queue around the core (``auth/guard.py``,
``auth/audit.py``), in-process with the memory limiter and an in-memory sink."""

from __future__ import annotations

import asyncio
from typing import Any

from mcp_protocol.auth import principal as caller
from mcp_protocol.auth.audit import AuditEntry, AuditQueue, AuditSink, capped, redact
from mcp_protocol.auth.guard import Guard
from mcp_protocol.auth.limits import MemoryRateLimiter
from mcp_protocol.auth.principal import Principal, Rate
from mcp_protocol.jsonrpc import Request
from tests.unit.protocol.conftest import RecordingOutbound, initialized, make_server


class ListSink(AuditSink):
    def __init__(self) -> None:
        self.entries: list[AuditEntry] = []
        self.written = asyncio.Event()

    async def write(self, entries: list[AuditEntry]) -> None:
        self.entries += entries
        self.written.set()


def test_secret_looking_keys_are_redacted_at_any_depth() -> None:
    value = {"q": "x", "Password": "p", "nested": [{"api_key": "k", "ok": 1}], "Authorization": "Bearer t",
             "client_secret": "s", "refresh_token": "r"}
    hidden = "[redacted]"
    assert redact(value) == {"q": "x", "Password": hidden, "nested": [{"api_key": hidden, "ok": 1}],
                             "Authorization": hidden, "client_secret": hidden, "refresh_token": hidden}
    big = capped({"text": "x" * 10000}, 100)
    assert set(big) == {"_truncated"} and len(big["_truncated"]) <= 100


async def _call(server: Any, session: Any, method: str, params: dict[str, Any], who: Principal) -> Any:
    token = caller.bind(who)
    try:
        return await server.handle(Request(1, method, params), session, RecordingOutbound())
    finally:
        caller.unbind(token)


def _echo(server: Any) -> tuple[str, dict[str, Any]]:
    tool = next(t for t in server.provider.snapshot().tools if t.name == "echo")
    return tool.name, {"message": "hi", "token": "secret-value"}


async def test_over_the_limit_a_tool_call_is_an_error_result_and_other_methods_a_jsonrpc_error() -> None:
    server = make_server()
    server.interceptor = Guard(MemoryRateLimiter(), rate=Rate(2, 2 / 3600))
    session = await initialized(server)
    who = Principal("key:1")
    name, arguments = _echo(server)
    assert "result" in await _call(server, session, "tools/list", {}, who)
    assert not (await _call(server, session, "tools/call", {"name": name, "arguments": arguments}, who))[
        "result"].get("isError")
    refused = await _call(server, session, "tools/call", {"name": name, "arguments": arguments}, who)
    assert refused["result"]["isError"] is True
    assert refused["result"]["content"][0]["text"].startswith("Rate limit exceeded: retry in")
    error = (await _call(server, session, "tools/list", {}, who))["error"]
    assert error["code"] == -32000 and error["data"]["retryAfter"] > 0
    assert "result" in await _call(server, session, "ping", {}, who)  # never limited
    assert "result" in await _call(server, session, "tools/list", {}, Principal("key:2"))


async def test_a_key_rate_overrides_the_default_and_tool_rates_apply_per_tool() -> None:
    server = make_server()
    name, arguments = _echo(server)
    server.interceptor = Guard(MemoryRateLimiter(), rate=Rate(1, 0.001), tool_rates={name: Rate(1, 0.001)})
    session = await initialized(server)
    generous = Principal("key:9", rate=Rate(100, 1.0))
    first = await _call(server, session, "tools/call", {"name": name, "arguments": arguments}, generous)
    second = await _call(server, session, "tools/call", {"name": name, "arguments": arguments}, generous)
    assert not first["result"].get("isError") and second["result"]["isError"] is True  # the tool's bucket
    assert "result" in await _call(server, session, "tools/list", {}, generous)  # the key's own rate


async def test_requests_in_flight_are_capped_per_principal() -> None:
    server = make_server()
    guard = Guard(MemoryRateLimiter(), max_in_flight=1)
    server.interceptor = guard
    session = await initialized(server)
    who = Principal("key:1")
    assert guard.in_flight.enter("key:1")  # one request already running
    try:
        error = (await _call(server, session, "tools/list", {}, who))["error"]
        assert "in flight" in error["message"]
        assert "result" in await _call(server, session, "tools/list", {}, Principal("key:2"))
    finally:
        guard.in_flight.leave("key:1")
    assert "result" in await _call(server, session, "tools/list", {}, who)


async def test_tool_calls_are_audited_off_the_call_with_secrets_redacted() -> None:
    server = make_server()
    sink = ListSink()
    queue = AuditQueue(sink)
    server.interceptor = Guard(MemoryRateLimiter(), audit=queue)
    queue.start()
    try:
        session = await initialized(server)
        name, arguments = _echo(server)
        who = Principal("key:1", label="key ab")
        await _call(server, session, "tools/call", {"name": name, "arguments": arguments}, who)
        await _call(server, session, "tools/call", {"name": "nope", "arguments": {}}, who)
        await _call(server, session, "tools/list", {}, Principal("key:1"))  # not audited
        await asyncio.wait_for(sink.written.wait(), 5)
        while len(sink.entries) < 2:
            sink.written.clear()
            await asyncio.wait_for(sink.written.wait(), 5)
    finally:
        await queue.close()
    ok, error = sink.entries
    # Only the session id's first characters (issue 24 item 12): the id is a credential.
    assert (ok.name, ok.outcome, ok.principal, ok.session) == (name, "ok", "key ab", session.id[:8])
    assert ok.arguments == {"message": "hi", "token": "[redacted]"}
    assert error.outcome == "error" and error.error.startswith("-32602")
    assert ok.duration_ms >= 0 and ok.revision == "2025-11-25"


async def test_a_full_audit_queue_drops_and_counts_rather_than_waiting() -> None:
    queue = AuditQueue(ListSink(), size=2)
    entry = AuditEntry(0, "p", None, None, "v", "tools/call", "t", {}, "ok", "", 1.0)
    for _ in range(5):
        queue.record(entry)
    assert queue.dropped == 3


async def test_an_endpoints_rate_replaces_the_default_in_a_bucket_of_its_own() -> None:
    from mcp_protocol.endpoints import EndpointAccess, EndpointSpec

    guard = Guard(MemoryRateLimiter(), rate=Rate(100, 100))
    servers = {}
    for slug in ("a", "b", None):
        server = servers[slug] = make_server()
        server.interceptor = guard
        if slug is not None:
            server.endpoint = EndpointSpec(slug, slug, access=EndpointAccess(rate="1/3600"))
            server.endpoint_key = slug
    sessions = {slug: await initialized(server) for slug, server in servers.items()}
    who = Principal("key:1")

    async def listed(slug: str | None) -> bool:
        return "result" in await _call(servers[slug], sessions[slug], "tools/list", {}, who)

    assert await listed("a") and not await listed("a")  # a's rate: 1 an hour
    assert await listed("b") and not await listed("b")  # b's bucket is not a's
    assert all([await listed(None) for _ in range(5)])  # /mcp keeps the default
    keyed = Principal("key:2", rate=Rate(3, 3 / 3600))  # a key's own rate stays its cap everywhere
    assert "result" in await _call(servers["a"], sessions["a"], "tools/list", {}, keyed)
    assert "error" in await _call(servers["a"], sessions["a"], "tools/list", {}, keyed)


async def test_an_audit_row_names_the_virtual_server_called() -> None:
    from mcp_protocol.endpoints import EndpointSpec

    sink = ListSink()
    queue = AuditQueue(sink)
    guard = Guard(MemoryRateLimiter(), audit=queue)
    support, catch_all = make_server(), make_server()
    support.endpoint, support.endpoint_key = EndpointSpec("support", "support"), "support"
    queue.start()
    try:
        for server in (support, catch_all):
            server.interceptor = guard
            name, arguments = _echo(server)
            call = {"name": name, "arguments": arguments}
            await _call(server, await initialized(server), "tools/call", call, Principal("key:1"))
        while len(sink.entries) < 2:
            sink.written.clear()
            await asyncio.wait_for(sink.written.wait(), 5)
    finally:
        await queue.close()
    assert [e.server for e in sink.entries] == ["support", ""]
