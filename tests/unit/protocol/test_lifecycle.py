"""Lifecycle, version negotiation and capability gating ([L] basic/lifecycle.mdx; checklist H, T)."""

from __future__ import annotations

import pytest

from mcp_protocol.jsonrpc import Notification, Request
from mcp_protocol.memory_provider import MemoryProvider
from mcp_protocol.provider import ProviderCapabilities
from mcp_protocol.session import Session

from .conftest import RecordingOutbound, call, initialized, make_server

LEGACY = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]


@pytest.mark.parametrize("version", LEGACY)
async def test_initialize_echoes_each_supported_legacy_version(server, version):
    session = Session.create()
    response = await call(
        server,
        session,
        "initialize",
        {
            "protocolVersion": version,
            "capabilities": {"sampling": {}},
            "clientInfo": {"name": "c", "version": "1"},
        },
    )
    assert response["result"]["protocolVersion"] == version
    assert session.protocol_version == version
    assert session.client_capabilities == {"sampling": {}}
    assert session.client_info == {"name": "c", "version": "1"}
    assert session.initialized and session.dirty


@pytest.mark.parametrize("requested", ["2026-07-28", "1999-01-01", "draft"])
async def test_initialize_with_an_unsupported_or_modern_version_offers_latest_legacy(server, requested):
    session = Session.create()
    response = await call(server, session, "initialize", {"protocolVersion": requested, "capabilities": {}})
    assert response["result"]["protocolVersion"] == "2025-11-25"


async def test_initialize_result_has_server_info_capabilities_and_instructions():
    server = make_server(instructions="Use echo.")
    session = Session.create()
    result = (
        await call(server, session, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}})
    )["result"]
    assert result["serverInfo"] == {"name": "test-server", "version": "1.2.3", "title": "Test Server"}
    assert result["instructions"] == "Use echo."
    assert result["capabilities"] == {
        "logging": {},
        "completions": {},
        "prompts": {"listChanged": True},
        "resources": {"subscribe": True, "listChanged": True},
        "tools": {"listChanged": True},
    }


async def test_2024_11_05_gets_no_completions_capability_and_no_title(server):
    session = Session.create()
    result = (
        await call(server, session, "initialize", {"protocolVersion": "2024-11-05", "capabilities": {}})
    )["result"]
    assert "completions" not in result["capabilities"]
    assert "title" not in result["serverInfo"]


async def test_initialize_without_protocol_version_is_invalid_params(server):
    response = await call(server, Session.create(), "initialize", {"capabilities": {}})
    assert response["error"]["code"] == -32602


async def test_requests_before_initialize_are_invalid_request(server):
    session = Session.create()
    response = await call(server, session, "tools/list")
    assert response["error"]["code"] == -32600
    assert not session.initialized


async def test_ping_is_allowed_before_initialize_and_returns_empty_result(server):
    assert (await call(server, Session.create(), "ping"))["result"] == {}


async def test_initialize_twice_is_invalid_request(server):
    session = await initialized(server)
    response = await call(
        server, session, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}}
    )
    assert response["error"]["code"] == -32600
    assert session.protocol_version == "2025-11-25"


async def test_unknown_method_is_method_not_found(server):
    session = await initialized(server)
    response = await call(server, session, "tools/destroy")
    assert response["error"] == {"code": -32601, "message": "Method not found: tools/destroy"}


async def test_server_discover_is_not_a_legacy_method(server):
    response = await call(server, await initialized(server), "server/discover")
    assert response["error"]["code"] == -32601


async def test_a_method_of_an_undeclared_capability_is_method_not_found():
    caps = ProviderCapabilities(prompts=False, logging=False, resources_subscribe=False, completions=False)
    server = make_server(_provider_with(caps))
    session = await initialized(server)
    result = (await call(server, Session.create(), "initialize", {"protocolVersion": "2025-11-25"}))["result"]
    assert "prompts" not in result["capabilities"] and "logging" not in result["capabilities"]
    assert result["capabilities"]["resources"]["subscribe"] is False
    for method, params in [
        ("prompts/list", None),
        ("prompts/get", {"name": "greet"}),
        ("logging/setLevel", {"level": "info"}),
        ("resources/subscribe", {"uri": "demo://readme"}),
        (
            "completion/complete",
            {"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "name", "value": ""}},
        ),
    ]:
        assert (await call(server, session, method, params))["error"]["code"] == -32601, method
    assert "result" in await call(server, session, "tools/list")


def _provider_with(caps: ProviderCapabilities) -> MemoryProvider:
    provider = MemoryProvider()
    provider.capabilities = caps
    return provider


async def test_notifications_get_no_response(server):
    session = await initialized(server)
    assert (
        await server.handle(Notification("notifications/initialized", None), session, RecordingOutbound())
        is None
    )
    assert (
        await server.handle(Notification("notifications/unknown", {"x": 1}), session, RecordingOutbound())
        is None
    )


async def test_a_closed_session_refuses_requests(server):
    session = await initialized(server)
    session.state = "closed"
    assert (await call(server, session, "tools/list"))["error"]["code"] == -32600


async def test_set_level_stores_the_level_and_rejects_unknown_levels(server):
    session = await initialized(server)
    session.dirty = False
    assert (await call(server, session, "logging/setLevel", {"level": "warning"}))["result"] == {}
    assert session.log_level == "warning" and session.dirty
    response = await call(server, session, "logging/setLevel", {"level": "loud"})
    assert response["error"]["code"] == -32602
    assert session.log_level == "warning"


async def test_an_unexpected_exception_becomes_a_generic_internal_error(caplog):
    from mcp_protocol.definitions import Tool

    async def boom(args, ctx):
        raise RuntimeError("secret database password is hunter2")

    provider = MemoryProvider(tools=[(Tool("boom", {"type": "object"}), boom)])
    server = make_server(provider)
    session = await initialized(server)
    response = await server.handle(Request(5, "tools/call", {"name": "boom"}), session, RecordingOutbound())
    assert response == {"jsonrpc": "2.0", "id": 5, "error": {"code": -32603, "message": "Internal error"}}
    assert "hunter2" in caplog.text  # logged with its traceback for the operator, never sent


_COMPLETE = {"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "name", "value": ""}}
METHODS_OF: dict[str, list[tuple[str, dict | None]]] = {
    "tools": [("tools/list", None), ("tools/call", {"name": "echo", "arguments": {"message": "x"}})],
    "resources": [
        ("resources/list", None),
        ("resources/read", {"uri": "demo://readme"}),
        ("resources/templates/list", None),
        ("resources/subscribe", {"uri": "demo://readme"}),
        ("resources/unsubscribe", {"uri": "demo://readme"}),
    ],
    "prompts": [("prompts/list", None), ("prompts/get", {"name": "greet", "arguments": {"name": "A"}})],
    "completions": [("completion/complete", _COMPLETE)],
    "logging": [("logging/setLevel", {"level": "info"})],
}


@pytest.mark.parametrize("capability", list(METHODS_OF))
async def test_each_method_of_a_switched_off_capability_is_method_not_found(capability):
    # [06+] lifecycle.mdx: only negotiated capabilities may be used; checklist T: -32601.
    server = make_server(_provider_with(ProviderCapabilities(**{capability: False})))
    declared = (
        await call(
            server, Session.create(), "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}}
        )
    )["result"]["capabilities"]
    assert capability not in declared
    session = await initialized(server)
    for method, params in METHODS_OF[capability]:
        response = await call(server, session, method, params)
        assert response["error"] == {"code": -32601, "message": f"Method not found: {method}"}, method
    for other, methods in METHODS_OF.items():
        if other != capability:
            for method, params in methods:
                assert "result" in await call(server, session, method, params), method


async def test_subscribe_needs_the_resources_capability_even_with_the_subscribe_flag_on():
    server = make_server(_provider_with(ProviderCapabilities(resources=False, resources_subscribe=True)))
    session = await initialized(server)
    for method in ("resources/subscribe", "resources/unsubscribe"):
        assert (await call(server, session, method, {"uri": "demo://readme"}))["error"]["code"] == -32601
    assert session.subscriptions == set()


@pytest.mark.parametrize("capability", ["tools", "resources", "prompts", "completions"])
async def test_a_switched_off_capability_is_method_not_found_in_2026_07_28_too(capability):
    from .conftest import modern_meta

    server = make_server(_provider_with(ProviderCapabilities(**{capability: False})))
    for method, params in METHODS_OF[capability]:
        if method in ("resources/subscribe", "resources/unsubscribe"):
            continue  # not 2026-07-28 methods at all
        request = Request(1, method, {**(params or {}), "_meta": modern_meta()})
        response = await server.handle_stateless(request, RecordingOutbound())
        assert response is not None and response["error"]["code"] == -32601, method
    discover = Request(2, "server/discover", {"_meta": modern_meta()})
    result = await server.handle_stateless(discover, RecordingOutbound())
    assert result is not None and capability not in result["result"]["capabilities"]
