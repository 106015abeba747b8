"""Raw-HTTP helpers for talking to ``/mcp`` with httpx: headers, the handshake, an SSE reader.

Used where the SDK client would hide what is on the wire (status codes, headers, event ids,
priming events, keep-alive comments, reconnects).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import httpx

ACCEPT_BOTH = "application/json, text/event-stream"
POST_HEADERS = {"accept": ACCEPT_BOTH, "content-type": "application/json"}


def request(id: int | str, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def notification(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return message


def initialize_message(
    version: str = "2025-11-25", capabilities: dict[str, Any] | None = None
) -> dict[str, Any]:
    return request(
        0,
        "initialize",
        {
            "protocolVersion": version,
            "capabilities": capabilities if capabilities is not None else {"sampling": {}},
            "clientInfo": {"name": "raw-httpx", "version": "1.0"},
        },
    )


def session_headers(session_id: str, version: str = "2025-11-25", **extra: str) -> dict[str, str]:
    headers = {**POST_HEADERS, "mcp-session-id": session_id}
    if version:
        headers["mcp-protocol-version"] = version
    headers.update(extra)
    return headers


def stream_headers(session_id: str, last_event_id: str | None = None) -> dict[str, str]:
    """A GET of the session's standalone stream, resuming after ``last_event_id`` if given."""
    headers = {**session_headers(session_id), "accept": "text/event-stream"}
    if last_event_id:
        headers["last-event-id"] = last_event_id
    return headers


async def open_session(
    client: httpx.AsyncClient,
    url: str,
    version: str = "2025-11-25",
    capabilities: dict[str, Any] | None = None,
) -> str:
    """initialize + notifications/initialized; returns the session id."""
    response = await client.post(url, headers=POST_HEADERS, json=initialize_message(version, capabilities))
    assert response.status_code == 200, response.text
    session_id = response.headers["mcp-session-id"]
    sent = await client.post(
        url, headers=session_headers(session_id, version), json=notification("notifications/initialized")
    )
    assert sent.status_code == 202, sent.text
    return session_id


@dataclass
class SSEEvent:
    id: str | None = None
    event: str | None = None
    data: str | None = None
    retry: int | None = None
    comments: list[str] = field(default_factory=list)

    @property
    def message(self) -> dict[str, Any]:
        assert self.data, f"event {self.id!r} has no data"
        result: dict[str, Any] = json.loads(self.data)
        return result

    @property
    def is_priming(self) -> bool:
        return self.id is not None and self.data == ""


async def sse_events(response: httpx.Response) -> AsyncIterator[SSEEvent]:
    """Parse an SSE body into events; a block with only comments is yielded with ``comments``
    set (so tests can see keep-alives); a ``retry``-only block is yielded too."""
    current = SSEEvent()
    data_lines: list[str] | None = None
    touched = False
    async for line in response.aiter_lines():
        if line == "":
            if touched:
                current.data = "\n".join(data_lines) if data_lines is not None else None
                yield current
            current, data_lines, touched = SSEEvent(), None, False
            continue
        touched = True
        if line.startswith(":"):
            current.comments.append(line[1:].strip())
            continue
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "data":
            data_lines = [*(data_lines or []), value]
        elif name == "id":
            current.id = value
        elif name == "event":
            current.event = value
        elif name == "retry":
            current.retry = int(value)


async def next_data(events: AsyncIterator[SSEEvent], seconds: float = 10.0) -> SSEEvent:
    """The next event that carries a message (keep-alive comments and priming events skipped)."""
    async with asyncio.timeout(seconds):
        async for event in events:
            if event.data:
                return event
    raise AssertionError("the stream ended")


async def next_comment(events: AsyncIterator[SSEEvent], seconds: float = 10.0) -> None:
    """The next keep-alive comment; a message before it fails the test."""
    async with asyncio.timeout(seconds):
        async for event in events:
            assert not event.data, f"unexpected message {event.data}"
            if event.comments:
                return
    raise AssertionError("the stream ended")


# -- 2026-07-28 (stateless) requests --------------------------------------------------------------
MODERN = "2026-07-28"
_NAME_PARAM = {
    "tools/call": "name", "prompts/get": "name", "resources/read": "uri",
    "tasks/get": "taskId", "tasks/update": "taskId", "tasks/cancel": "taskId",
}


def modern_message(
    id: int | str,
    method: str,
    params: dict[str, Any] | None = None,
    capabilities: dict[str, Any] | None = None,
    **meta: Any,
) -> dict[str, Any]:
    """A 2026-07-28 request: ``params._meta`` names the revision and the client's capabilities."""
    body_meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": capabilities or {},
        **meta,
    }
    return request(id, method, {**(params or {}), "_meta": body_meta})


def modern_headers(message: dict[str, Any] | str, name: str | None = None, **extra: str) -> dict[str, str]:
    """The request-metadata headers mirroring ``message`` (or a method name and ``Mcp-Name``)."""
    if isinstance(message, dict):
        method = message["method"]
        key = _NAME_PARAM.get(method)
        name = message["params"].get(key) if key and name is None else name
    else:
        method = message
    headers = {**POST_HEADERS, "mcp-protocol-version": MODERN, "mcp-method": method}
    if name is not None:
        headers["mcp-name"] = name
    headers.update(extra)
    return headers
