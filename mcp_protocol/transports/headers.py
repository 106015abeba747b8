"""Request header parsing and the header rules of ``/mcp``.

Owns: reading the handful of headers the endpoint needs in one pass over the ASGI header list;
``Accept`` (406) and ``Content-Type`` (415) checks as the SDKs do (the spec sets no status for
them: checklist §2.V); the legacy ``MCP-Protocol-Version`` rules ([06+] basic/transports.mdx
"Protocol Version Header"); and the 2026-07-28 "Request Metadata" headers (``MCP-Protocol-Version``
must equal ``_meta``, ``Mcp-Method`` / ``Mcp-Name`` must mirror the body → 400 with -32020).
It does not know about sessions or streams.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ..by_schema import PerSchema
from ..errors import HEADER_MISMATCH, INVALID_PARAMS
from ..jsonrpc import Notification, Request
from ..versions import SUPPORTED_NEWEST_FIRST, SUPPORTED_VERSIONS, V2025_03_26
from .responses import Headers, HTTPError

PROTOCOL_VERSION_META = "io.modelcontextprotocol/protocolVersion"

_FIELDS = {
    b"accept": "accept",
    b"content-type": "content_type",
    b"content-length": "content_length",
    b"mcp-session-id": "session_id",
    b"mcp-protocol-version": "protocol_version",
    b"last-event-id": "last_event_id",
    b"origin": "origin",
    b"host": "host",
    b"mcp-method": "mcp_method",
    b"mcp-name": "mcp_name",
    # W3C Trace Context: the parent of a request's span when its _meta carries none (tracing/).
    b"traceparent": "traceparent",
    b"tracestate": "tracestate",
}


@dataclass(slots=True)
class RequestHeaders:
    accept: str = ""
    content_type: str = ""
    content_length: str | None = None
    session_id: str | None = None
    protocol_version: str | None = None
    last_event_id: str | None = None
    origin: str | None = None
    host: str | None = None
    mcp_method: str | None = None
    mcp_name: str | None = None
    traceparent: str | None = None
    tracestate: str | None = None


def parse_headers(raw: Headers) -> RequestHeaders:
    """One pass; ASGI header names are already lower-case. Values are latin-1 per ASGI, and
    compared without surrounding whitespace (RFC 9110 §5.5: optional whitespace around a field
    value is not part of it; servers may not see it stripped by every ASGI server)."""
    headers = RequestHeaders()
    fields = _FIELDS
    for name, value in raw:
        attr = fields.get(name)
        if attr is not None:
            setattr(headers, attr, value.decode("latin-1").strip(" \t"))
    return headers


@lru_cache(maxsize=64)
def _media_ranges(accept: str) -> frozenset[str]:
    return frozenset(part.split(";", 1)[0].strip().lower() for part in accept.split(","))


def accepts(accept: str, media_type: str) -> bool:
    """Does an ``Accept`` header admit ``media_type`` (``type/sub``, ``type/*`` or ``*/*``)?"""
    ranges = _media_ranges(accept)
    return media_type in ranges or "*/*" in ranges or media_type.split("/", 1)[0] + "/*" in ranges


def check_post_accept(headers: RequestHeaders) -> None:
    # [L] transports.mdx: the client MUST list both; the SDKs answer 406 otherwise.
    if not (accepts(headers.accept, "application/json") and accepts(headers.accept, "text/event-stream")):
        raise HTTPError(406, "Not Acceptable: Client must accept both application/json and text/event-stream")


def check_get_accept(headers: RequestHeaders) -> None:
    if not accepts(headers.accept, "text/event-stream"):
        raise HTTPError(406, "Not Acceptable: Client must accept text/event-stream")


@lru_cache(maxsize=64)
def _is_json(content_type: str) -> bool:
    return content_type.split(";", 1)[0].strip().lower() == "application/json"


def check_content_type(headers: RequestHeaders) -> None:
    if not _is_json(headers.content_type):
        raise HTTPError(415, "Unsupported Media Type: Content-Type must be application/json")


def check_supported_version(header: str | None) -> None:
    """[06+] transports.mdx: an invalid or unsupported MCP-Protocol-Version → 400."""
    if header is not None and header not in SUPPORTED_VERSIONS:
        raise HTTPError(
            400,
            f"Bad Request: Unsupported protocol version: {header}",
            data={"supported": list(SUPPORTED_NEWEST_FIRST), "requested": header},
        )


def check_session_version(header: str | None, negotiated: str | None) -> None:
    """The header of a request inside a legacy session.

    Missing → the server assumes 2025-03-26 and accepts it. Otherwise it must name the negotiated
    revision, with one tolerated difference: the conformance suite sends ``2025-03-26`` inside a
    2025-11-25 session (the same value a missing header stands for), so that is accepted too.
    """
    if header is None or header == negotiated or header == V2025_03_26:
        return
    check_supported_version(header)
    raise HTTPError(
        400,
        f"Bad Request: MCP-Protocol-Version {header} does not match the session's {negotiated}",
        data={"negotiated": negotiated, "requested": header},
    )


# -- 2026-07-28 "Request Metadata" (basic/transports/streamable-http.mdx) -------------------------
def _decode_value(value: str) -> str | None:
    """Header values may be ``=?base64?<b64>?=`` for non-ASCII text; None when undecodable."""
    if value.startswith("=?base64?") and value.endswith("?="):
        try:
            return base64.b64decode(value[9:-2], validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            return None
    return value


_NAME_PARAM = {
    "tools/call": "name", "prompts/get": "name", "resources/read": "uri",
    # SEP-2663 "Streamable HTTP: Routing Headers": Mcp-Name is the task's id.
    "tasks/get": "taskId", "tasks/update": "taskId", "tasks/cancel": "taskId",
}


def _mismatch(message: str) -> HTTPError:
    return HTTPError(400, f"Header mismatch: {message}", code=HEADER_MISMATCH)


def check_modern_headers(headers: RequestHeaders, message: Request | Notification) -> None:
    """Headers must mirror the body; a missing required one or a different value → -32020.
    (``Mcp-Param-{Name}`` mirrors are checked by ``check_param_headers``.)

    A body without ``_meta["io.modelcontextprotocol/protocolVersion"]`` (a request that is modern
    by its header alone) is not a mismatch but a missing required ``_meta`` field: -32602 with
    400 (2026-07-28 basic/index.mdx "Request Metadata"), checked first."""
    params: dict[str, Any] = message.params or {}
    meta = params.get("_meta")
    body_version = meta.get(PROTOCOL_VERSION_META) if isinstance(meta, dict) else None
    if body_version is None:
        missing = "params._meta" if not isinstance(meta, dict) else f"_meta[{PROTOCOL_VERSION_META!r}]"
        raise HTTPError(400, f"Invalid params: missing required {missing}", code=INVALID_PARAMS)
    if headers.protocol_version is None:
        raise _mismatch("MCP-Protocol-Version header is required")
    if headers.protocol_version != body_version:
        raise _mismatch(f"MCP-Protocol-Version {headers.protocol_version!r} ≠ _meta {body_version!r}")
    if headers.mcp_method is None:
        raise _mismatch("Mcp-Method header is required")
    if _decode_value(headers.mcp_method) != message.method:
        raise _mismatch(f"Mcp-Method {headers.mcp_method!r} ≠ method {message.method!r}")
    key = _NAME_PARAM.get(message.method)
    if key is not None:
        expected = params.get(key)
        if headers.mcp_name is None:
            raise _mismatch("Mcp-Name header is required for " + message.method)
        if _decode_value(headers.mcp_name) != expected:
            raise _mismatch(f"Mcp-Name {headers.mcp_name!r} ≠ params.{key}")


# Visible ASCII and spaces/tabs (RFC 9110 field-value, no CR/LF or controls).
_FIELD_VALUE = re.compile(r"[\x20-\x7e\t]*")


def _param_matches(raw: str, value: Any) -> bool:
    decoded = _decode_value(raw)
    if decoded is None:
        return False
    if isinstance(value, bool):
        return decoded == ("true" if value else "false")
    if isinstance(value, int):
        try:
            return int(decoded) == value  # integers compare numerically (SHOULD)
        except ValueError:
            return False
    return isinstance(value, str) and decoded == value


def _mirrored(input_schema: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """A tool's (property, header) pairs marked ``x-mcp-header``: found once per schema object,
    so the calls of a tool that mirrors nothing (most) read no header at all."""
    properties = input_schema.get("properties")
    if not isinstance(properties, dict):
        return ()
    return tuple((prop, schema["x-mcp-header"]) for prop, schema in properties.items()
                 if isinstance(schema, dict) and isinstance(schema.get("x-mcp-header"), str))


_mirrored_properties = PerSchema(_mirrored)


def check_param_headers(
    raw: Headers, message: Request | Notification, input_schema: Mapping[str, Any] | None
) -> None:
    """2026-07-28 "Custom Headers": every ``x-mcp-header: <Name>`` property of the called tool's
    ``inputSchema`` that has a (non-null) value in the body needs ``Mcp-Param-<Name>`` with that
    value; a missing, different or malformed one → 400 + -32020."""
    pairs = _mirrored_properties(input_schema) if input_schema else ()
    if not pairs:
        return
    arguments = (message.params or {}).get("arguments")
    arguments = arguments if isinstance(arguments, dict) else {}
    mirrored = {  # values without surrounding whitespace (RFC 9110 §5.5), as in parse_headers
        name.decode("latin-1")[len("mcp-param-") :]: value.decode("latin-1").strip(" \t")
        for name, value in raw
        if name.startswith(b"mcp-param-")
    }
    for prop, header in pairs:
        value = arguments.get(prop)
        got = mirrored.get(header.lower())
        if got is not None and not _FIELD_VALUE.fullmatch(got):
            raise _mismatch(f"Mcp-Param-{header} has invalid characters")
        if value is None:
            continue  # absent or null in the body: the header is not expected
        if got is None:
            raise _mismatch(f"Mcp-Param-{header} header is required (arguments.{prop} is set)")
        if not _param_matches(got, value):
            raise _mismatch(f"Mcp-Param-{header} ≠ arguments.{prop}")
