"""tools/list and tools/call: argument validation per revision, errors, structured output (tools.mdx)."""

from __future__ import annotations

import pytest

from mcp_protocol import validation
from mcp_protocol.definitions import Tool
from mcp_protocol.errors import ToolError
from mcp_protocol.memory_provider import MemoryProvider

from .conftest import call, initialized, make_server


async def test_tools_list_returns_the_demo_tools_in_order(server):
    session = await initialized(server)
    tools = (await call(server, session, "tools/list"))["result"]["tools"]
    assert [t["name"] for t in tools][:3] == ["echo", "add", "countdown"]
    assert tools[0]["inputSchema"]["required"] == ["message"]


async def test_echo_returns_the_message_as_text(server):
    session = await initialized(server)
    result = (await call(server, session, "tools/call", {"name": "echo", "arguments": {"message": "héllo"}}))[
        "result"
    ]
    assert result == {"content": [{"type": "text", "text": "héllo"}]}


async def test_unknown_tool_is_invalid_params(server):
    session = await initialized(server)
    response = await call(server, session, "tools/call", {"name": "nope", "arguments": {}})
    assert response["error"]["code"] == -32602
    assert "Unknown tool" in response["error"]["message"]


async def test_a_call_without_arguments_is_treated_as_empty_arguments():
    seen = []

    async def record(args, ctx):
        seen.append(args)
        return {"content": [{"type": "text", "text": "ok"}]}

    server = make_server(MemoryProvider(tools=[(Tool("t", {"type": "object", "properties": {}}), record)]))
    session = await initialized(server)
    assert "result" in await call(server, session, "tools/call", {"name": "t"})
    assert seen == [{}]


async def test_non_object_arguments_are_invalid_params(server):
    session = await initialized(server)
    response = await call(server, session, "tools/call", {"name": "echo", "arguments": ["x"]})
    assert response["error"]["code"] == -32602


@pytest.mark.parametrize("version", ["2025-11-25"])
async def test_invalid_arguments_are_a_tool_error_result_from_2025_11_25(server, version):
    session = await initialized(server, version)
    result = (await call(server, session, "tools/call", {"name": "echo", "arguments": {"message": 5}}))[
        "result"
    ]
    assert result["isError"] is True
    assert "message" in result["content"][0]["text"]


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-06-18"])
async def test_invalid_arguments_are_invalid_params_before_2025_11_25(server, version):
    session = await initialized(server, version)
    response = await call(server, session, "tools/call", {"name": "echo", "arguments": {}})
    assert response["error"]["code"] == -32602
    assert response["error"]["data"]["errors"]


async def test_a_tool_error_becomes_an_is_error_result(server):
    session = await initialized(server)
    result = (await call(server, session, "tools/call", {"name": "fail", "arguments": {"reason": "broken"}}))[
        "result"
    ]
    assert result == {"content": [{"type": "text", "text": "broken"}], "isError": True}


async def test_structured_content_is_validated_and_returned(server):
    session = await initialized(server, "2025-06-18")
    result = (await call(server, session, "tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}}))[
        "result"
    ]
    assert result["structuredContent"] == {"sum": 5}


async def test_structured_content_not_matching_output_schema_is_a_tool_error_the_model_can_read():
    async def wrong(args, ctx):
        return {"content": [], "structuredContent": {"sum": "five"}}

    schema = {"type": "object", "properties": {"sum": {"type": "number"}}, "required": ["sum"]}
    tool = Tool("bad", {"type": "object"}, output_schema=schema)
    server = make_server(MemoryProvider(tools=[(tool, wrong)]))
    session = await initialized(server)
    response = await call(server, session, "tools/call", {"name": "bad", "arguments": {}})
    # As the official SDKs answer it (issue 37): a result with isError, not JSON-RPC -32603.
    assert response["result"]["isError"] is True and "structuredContent" not in response["result"]
    text = response["result"]["content"][0]["text"]
    assert "does not match its outputSchema" in text and "sum: 'five' is not of type 'number'" in text


async def test_before_2025_06_18_structured_content_is_dropped_and_sent_as_text():
    async def only_structured(args, ctx):
        return {"content": [], "structuredContent": {"sum": 1}}

    tool = Tool("s", {"type": "object"}, output_schema={"type": "object"})
    server = make_server(MemoryProvider(tools=[(tool, only_structured)]))
    session = await initialized(server, "2025-03-26")
    result = (await call(server, session, "tools/call", {"name": "s"}))["result"]
    assert "structuredContent" not in result
    assert result["content"] == [{"type": "text", "text": '{"sum": 1}'}]


async def test_tool_error_content_is_shaped_for_the_version():
    async def audio_fail(args, ctx):
        raise ToolError("x", [{"type": "audio", "data": "AAAA", "mimeType": "audio/wav"}])

    server = make_server(MemoryProvider(tools=[(Tool("a", {"type": "object"}), audio_fail)]))
    session = await initialized(server, "2024-11-05")
    result = (await call(server, session, "tools/call", {"name": "a"}))["result"]
    assert result["isError"] is True
    assert result["content"][0]["type"] == "text"


async def test_task_augmented_calls_are_method_not_found(server):
    session = await initialized(server)
    response = await call(
        server, session, "tools/call", {"name": "echo", "arguments": {"message": "x"}, "task": {}}
    )
    assert response["error"]["code"] == -32601


def test_validators_are_compiled_once_per_schema():
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    first = validation.compile_schema(schema)
    assert validation.compile_schema(schema) is first
    assert validation.errors(schema, {"n": 1}) == []
    assert validation.errors(schema, {"n": "x"})


def test_schemas_default_to_draft_2020_12():
    schema = {"type": "object", "prefixItems": [{"type": "integer"}]}  # a 2020-12-only keyword
    tuple_schema = {"type": "array", "prefixItems": [{"type": "integer"}]}
    assert validation.errors(tuple_schema, ["x"])
    assert validation.errors(schema, {}) == []
    draft7 = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "array",
        "items": [{"type": "integer"}],
    }
    assert validation.errors(draft7, ["x"])  # draft-07 tuple form honoured when named


def test_an_invalid_schema_is_reported_not_crashing():
    with pytest.raises(validation.InvalidSchema):
        validation.compile_schema({"type": 12})


def test_remote_refs_are_never_fetched(monkeypatch):
    import urllib.request

    def no_network(*args, **kwargs):
        raise AssertionError("a remote $ref was fetched")

    monkeypatch.setattr(urllib.request, "urlopen", no_network)
    with pytest.raises(validation.InvalidSchema):
        validation.errors({"$ref": "https://example.com/schema.json"}, {})


def test_local_refs_and_defs_resolve():
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {"address": {"type": "object", "properties": {"city": {"type": "string"}}}},
        "properties": {"address": {"$ref": "#/$defs/address"}},
        "additionalProperties": False,
    }
    assert validation.errors(schema, {"address": {"city": "Oslo"}}) == []
    assert validation.errors(schema, {"address": {"city": 1}})
    assert validation.errors(schema, {"other": 1})


async def test_a_tool_whose_schema_has_a_remote_ref_fails_as_internal_error():
    async def ok(args, ctx):
        return {"content": []}

    tool = Tool("r", {"type": "object", "properties": {"x": {"$ref": "https://example.com/x.json"}}})
    server = make_server(MemoryProvider(tools=[(tool, ok)]))
    session = await initialized(server)
    response = await call(server, session, "tools/call", {"name": "r", "arguments": {"x": 1}})
    assert response["error"] == {"code": -32603, "message": "Internal error"}


async def test_a_task_required_tool_called_without_a_task_is_method_not_found_in_2025_11_25():
    async def ok(args, ctx):
        return {"content": []}

    tool = Tool("job", {"type": "object"}, execution={"taskSupport": "required"})
    server = make_server(MemoryProvider(tools=[(tool, ok)]))
    assert (await call(server, await initialized(server, "2025-11-25"), "tools/call", {"name": "job"}))[
        "error"
    ]["code"] == -32601
    assert "result" in await call(
        server, await initialized(server, "2025-06-18"), "tools/call", {"name": "job"}
    )


@pytest.mark.parametrize("structured", [[1, 2], "sum", 5, None])
@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25"])
async def test_non_object_structured_content_is_a_tool_error_in_legacy_sessions(
    structured, version, caplog
):
    # [06][11] schema.ts: structuredContent is an object; a 2026-era outputSchema may not be.
    async def array(args, ctx):
        return {"content": [], "structuredContent": structured}

    tool = Tool("arr", {"type": "object"}, output_schema={"type": "array"})
    server = make_server(MemoryProvider(tools=[(tool, array)]))
    session = await initialized(server, version)
    response = await call(server, session, "tools/call", {"name": "arr"})
    assert response["result"]["isError"] is True and "structuredContent" not in response["result"]
    assert "not an object" in response["result"]["content"][0]["text"]
    assert "non-object structuredContent" in caplog.text


async def test_non_object_structured_content_is_dropped_from_a_legacy_tool_error():
    async def failing(args, ctx):
        return {"content": [{"type": "text", "text": "no"}], "structuredContent": [1], "isError": True}

    server = make_server(MemoryProvider(tools=[(Tool("f", {"type": "object"}), failing)]))
    session = await initialized(server, "2025-11-25")
    result = (await call(server, session, "tools/call", {"name": "f"}))["result"]
    assert result == {"content": [{"type": "text", "text": "no"}], "isError": True}


async def test_2026_07_28_accepts_any_json_value_as_structured_content():
    from mcp_protocol.jsonrpc import Request

    from .conftest import RecordingOutbound, modern_meta

    async def array(args, ctx):
        return {"content": [], "structuredContent": [1, 2]}

    tool = Tool("arr", {"type": "object"}, output_schema={"type": "array"})
    server = make_server(MemoryProvider(tools=[(tool, array)]))
    request = Request(1, "tools/call", {"name": "arr", "_meta": modern_meta()})
    response = await server.handle_stateless(request, RecordingOutbound())
    assert response is not None and response["result"]["structuredContent"] == [1, 2]
