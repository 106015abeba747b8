"""Header parsing and the header rules of /mcp (headers.py): Accept, Content-Type, versions, 2026 mirrors."""

from __future__ import annotations

import pytest

from mcp_protocol.jsonrpc import Notification, Request
from mcp_protocol.transports.headers import (
    accepts,
    check_content_type,
    check_modern_headers,
    check_param_headers,
    check_post_accept,
    check_session_version,
    check_supported_version,
    parse_headers,
)
from mcp_protocol.transports.responses import HTTPError

META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}


def headers(**values: str) -> list[tuple[bytes, bytes]]:
    return [(k.replace("_", "-").encode(), v.encode("latin-1")) for k, v in values.items()]


def test_parse_headers_reads_the_endpoints_headers_and_ignores_others() -> None:
    parsed = parse_headers(
        headers(accept="text/event-stream", mcp_session_id="abc", x_other="1", last_event_id="s.1")
    )
    assert (
        parsed.accept == "text/event-stream" and parsed.session_id == "abc" and parsed.last_event_id == "s.1"
    )
    assert parsed.protocol_version is None and parsed.origin is None


@pytest.mark.parametrize(
    ("accept", "media", "ok"),
    [
        ("application/json, text/event-stream", "application/json", True),
        ("application/json;q=0.9, text/event-stream", "text/event-stream", True),
        ("*/*", "text/event-stream", True),
        ("text/*", "text/event-stream", True),
        ("application/json", "text/event-stream", False),
        ("", "application/json", False),
    ],
)
def test_accepts_matches_media_ranges(accept: str, media: str, ok: bool) -> None:
    assert accepts(accept, media) is ok


def test_post_must_accept_json_and_event_stream_else_406() -> None:
    check_post_accept(parse_headers(headers(accept="application/json, text/event-stream")))
    with pytest.raises(HTTPError) as info:
        check_post_accept(parse_headers(headers(accept="application/json")))
    assert info.value.status == 406


def test_content_type_must_be_json_else_415() -> None:
    check_content_type(parse_headers(headers(content_type="application/json; charset=utf-8")))
    with pytest.raises(HTTPError) as info:
        check_content_type(parse_headers(headers(content_type="text/plain")))
    assert info.value.status == 415


def test_unsupported_version_header_is_400_naming_supported_versions() -> None:
    check_supported_version(None)
    check_supported_version("2025-06-18")
    with pytest.raises(HTTPError) as info:
        check_supported_version("2024-01-01")
    assert info.value.status == 400 and "2025-11-25" in info.value.data["supported"]


@pytest.mark.parametrize(
    ("header", "negotiated", "ok"),
    [
        (None, "2025-11-25", True),  # missing → assume 2025-03-26: accepted
        ("2025-11-25", "2025-11-25", True),
        ("2025-03-26", "2025-11-25", True),  # what the conformance suite sends
        ("2025-06-18", "2025-11-25", False),
        ("2026-07-28", "2025-11-25", False),
        ("bogus", "2025-06-18", False),
    ],
)
def test_session_version_header_rules(header: str | None, negotiated: str, ok: bool) -> None:
    if ok:
        check_session_version(header, negotiated)
    else:
        with pytest.raises(HTTPError) as info:
            check_session_version(header, negotiated)
        assert info.value.status == 400


def test_modern_headers_must_mirror_the_body() -> None:
    call = Request(1, "tools/call", {"name": "echo", "_meta": META})
    good = dict(mcp_protocol_version="2026-07-28", mcp_method="tools/call", mcp_name="echo")
    check_modern_headers(parse_headers(headers(**good)), call)
    for broken in (
        {**good, "mcp_name": "other"},
        {k: v for k, v in good.items() if k != "mcp_name"},
        {**good, "mcp_method": "tools/list"},
        {**good, "mcp_protocol_version": "2025-11-25"},
        {**good, "mcp_name": "=?base64?!!!?="},
    ):
        with pytest.raises(HTTPError) as info:
            check_modern_headers(parse_headers(headers(**broken)), call)
        assert (info.value.status, info.value.code) == (400, -32020)


def test_modern_name_header_is_only_required_where_the_body_has_one() -> None:
    listing = Notification("notifications/x", {"_meta": META})
    check_modern_headers(
        parse_headers(headers(mcp_protocol_version="2026-07-28", mcp_method="notifications/x")), listing
    )
    read = Request(2, "resources/read", {"uri": "demo://é", "_meta": META})
    encoded = "=?base64?ZGVtbzovL8Op?="  # "demo://é"
    check_modern_headers(
        parse_headers(
            headers(mcp_protocol_version="2026-07-28", mcp_method="resources/read", mcp_name=encoded)
        ),
        read,
    )


REGION_SCHEMA = {
    "type": "object",
    "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"},
        "zones": {"type": "integer", "x-mcp-header": "Zones"},
        "exact": {"type": "boolean", "x-mcp-header": "Exact"},
        "note": {"type": "string"},
    },
}


def call(**arguments: object) -> Request:
    return Request(1, "tools/call", {"name": "region_lookup", "arguments": arguments, "_meta": META})


def test_param_headers_must_mirror_marked_arguments() -> None:
    check_param_headers(
        headers(mcp_param_region="eu-west", mcp_param_zones="003", mcp_param_exact="true"),
        call(region="eu-west", zones=3, exact=True, note="free"),
        REGION_SCHEMA,
    )
    check_param_headers(headers(), call(note="no marked argument given"), REGION_SCHEMA)
    check_param_headers(headers(), call(region=None), REGION_SCHEMA)  # null: no header expected
    encoded = "=?base64?" + "w4lsw6k=" + "?="  # "Élé"
    check_param_headers(headers(mcp_param_region=encoded), call(region="Élé"), REGION_SCHEMA)


@pytest.mark.parametrize(
    ("raw", "arguments"),
    [
        ({}, {"region": "eu"}),  # value in the body, header missing
        ({"mcp_param_region": "us"}, {"region": "eu"}),
        ({"mcp_param_zones": "4"}, {"zones": 3}),
        ({"mcp_param_exact": "1"}, {"exact": True}),
        ({"mcp_param_region": "e\x01u"}, {"region": "e\x01u"}),  # invalid characters
    ],
)
def test_param_header_mismatches_get_32020(raw: dict[str, str], arguments: dict[str, object]) -> None:
    with pytest.raises(HTTPError) as info:
        check_param_headers(headers(**raw), call(**arguments), REGION_SCHEMA)
    assert (info.value.status, info.value.code) == (400, -32020)
