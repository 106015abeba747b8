"""JSON-RPC 2.0 framing and every malformed-input error path (basic/index.mdx; JSON-RPC 2.0 §4-§6)."""

from __future__ import annotations

import json

import pytest

from mcp_protocol import jsonrpc
from mcp_protocol.errors import InternalError, InvalidRequest, ParseError
from mcp_protocol.jsonrpc import Notification, Request, Response


def test_invalid_json_is_a_parse_error():
    with pytest.raises(ParseError) as info:
        jsonrpc.parse_body(b'{"jsonrpc": "2.0", "id": 1,')
    assert info.value.code == -32700


def test_invalid_utf8_is_a_parse_error():
    with pytest.raises(ParseError):
        jsonrpc.decode(b'{"jsonrpc":"2.0","method":"\xff"}')


def test_parse_error_response_has_a_null_id():
    try:
        jsonrpc.parse_body("not json")
    except ParseError as exc:
        response = jsonrpc.error_response(jsonrpc.error_id(exc), exc)
    assert response == {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}
    assert json.loads(jsonrpc.dumps(response))["id"] is None


@pytest.mark.parametrize(
    "obj",
    [
        {"jsonrpc": "2.0", "id": None, "method": "ping"},
        {"jsonrpc": "2.0", "id": True, "method": "ping"},
        {"jsonrpc": "2.0", "id": 1.5, "method": "ping"},
        {"jsonrpc": "2.0", "id": [1], "method": "ping"},
    ],
)
def test_request_ids_must_be_strings_or_integers(obj):
    with pytest.raises(InvalidRequest) as info:
        jsonrpc.parse_message(obj)
    assert info.value.code == -32600
    assert jsonrpc.error_id(info.value) is None


def test_missing_method_is_invalid_request_carrying_the_id():
    with pytest.raises(InvalidRequest) as info:
        jsonrpc.parse_message({"jsonrpc": "2.0", "id": 7})
    assert jsonrpc.error_id(info.value) == 7
    assert jsonrpc.error_response(7, info.value)["error"]["code"] == -32600


@pytest.mark.parametrize("version", [None, "1.0", 2.0, "2.1"])
def test_wrong_jsonrpc_version_is_invalid_request(version):
    obj = {"id": "a", "method": "ping"}
    if version is not None:
        obj["jsonrpc"] = version
    with pytest.raises(InvalidRequest) as info:
        jsonrpc.parse_message(obj)
    assert jsonrpc.error_id(info.value) == "a"


def test_non_object_params_are_invalid_request():
    with pytest.raises(InvalidRequest) as info:
        jsonrpc.parse_message({"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": [1, 2]})
    assert jsonrpc.error_id(info.value) == 3


def test_non_string_method_is_invalid_request():
    with pytest.raises(InvalidRequest):
        jsonrpc.parse_message({"jsonrpc": "2.0", "id": 3, "method": 5})


def test_a_scalar_body_is_invalid_request():
    with pytest.raises(InvalidRequest):
        jsonrpc.parse_body(b"42")


def test_empty_batch_is_invalid_request():
    with pytest.raises(InvalidRequest) as info:
        jsonrpc.parse_body(b"[]")
    assert jsonrpc.error_id(info.value) is None


def test_batch_elements_are_parsed_one_by_one():
    items = jsonrpc.parse_body(
        b'[{"jsonrpc":"2.0","id":1,"method":"ping"}, 5, {"jsonrpc":"2.0","method":"n"}]'
    )
    assert isinstance(items, list)
    assert items[0] == Request(1, "ping", None)
    assert isinstance(items[1], InvalidRequest)
    assert items[2] == Notification("n", None)


def test_messages_are_classified():
    assert jsonrpc.parse_message({"jsonrpc": "2.0", "id": "x", "method": "m", "params": {"a": 1}}) == Request(
        "x", "m", {"a": 1}
    )
    assert jsonrpc.parse_message({"jsonrpc": "2.0", "method": "m"}) == Notification("m", None)
    assert jsonrpc.parse_message({"jsonrpc": "2.0", "id": 1, "result": {}}) == Response(1, result={})
    error = {"code": -1, "message": "no"}
    assert jsonrpc.parse_message({"jsonrpc": "2.0", "id": 1, "error": error}) == Response(1, error=error)


def test_a_response_with_both_result_and_error_is_invalid():
    with pytest.raises(InvalidRequest):
        jsonrpc.parse_message({"jsonrpc": "2.0", "id": 1, "result": {}, "error": {"code": 1, "message": "x"}})


def test_builders_and_compact_utf8_dumps():
    assert jsonrpc.result_response(1, {}) == {"jsonrpc": "2.0", "id": 1, "result": {}}
    assert jsonrpc.error_response(2, InternalError())["error"] == {
        "code": -32603,
        "message": "Internal error",
    }
    assert jsonrpc.error_response(None, {"code": 1, "message": "m"})["id"] is None
    assert jsonrpc.notification("n", None) == {"jsonrpc": "2.0", "method": "n"}
    assert jsonrpc.request(9, "m", {"a": 1}) == {"jsonrpc": "2.0", "id": 9, "method": "m", "params": {"a": 1}}
    assert jsonrpc.dumps({"t": "é\n"}) == '{"t":"é\\n"}'.encode()
