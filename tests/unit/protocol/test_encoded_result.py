"""A listing's JSON text is made once per snapshot and page, and only ever spliced into a response
when it still says what the result object says (``jsonrpc.EncodedResult``)."""

from __future__ import annotations

import json

from mcp_protocol import jsonrpc
from mcp_protocol.jsonrpc import EncodedResult, dumps, result_response

from .conftest import call, initialized


def test_a_response_around_an_encoded_result_is_the_same_bytes_as_encoding_it_whole():
    result = EncodedResult({"tools": [{"name": "é", "inputSchema": {"type": "object"}}]})
    for request_id in (1, "x-ü", 2**40):
        spliced = dumps(result_response(request_id, result))
        assert spliced == jsonrpc._encoder.encode(result_response(request_id, dict(result))).encode()
        assert json.loads(spliced)["id"] == request_id


def test_changing_an_encoded_result_drops_its_text():
    for change in (
        lambda r: r.__setitem__("resultType", "complete"),
        lambda r: r.setdefault("ttlMs", 0),
        lambda r: r.update(_meta={}),
        lambda r: r.pop("tools"),
        lambda r: r.__delitem__("tools"),
    ):
        result = EncodedResult({"tools": []})
        change(result)
        assert result.encoded is None
        assert json.loads(dumps(result_response(1, result)))["result"] == dict(result)
    unchanged = EncodedResult({"tools": []})
    unchanged.setdefault("tools", ["other"])
    assert unchanged.encoded is not None


async def test_tools_list_pages_are_encoded_once_per_snapshot(server):
    session = await initialized(server)
    first = (await call(server, session, "tools/list"))["result"]
    second = (await call(server, session, "tools/list"))["result"]
    assert isinstance(first, EncodedResult) and first.encoded is not None
    assert first.encoded is second.encoded  # the cached text, not a new encoding
    assert json.loads(first.encoded) == dict(first)
