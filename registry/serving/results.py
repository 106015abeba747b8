"""Turns what a handler returns into the spec's result shapes (one place, shared by every kind)."""

from __future__ import annotations

import base64
import json
from typing import Any


class BadHandlerResult(TypeError):
    pass


def text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def tool_result(value: Any) -> dict[str, Any]:
    """``str`` → one text block; ``list`` → the content blocks; ``dict`` → a ``CallToolResult``
    (``content`` and/or ``structuredContent``, optional ``isError``)."""
    if isinstance(value, str):
        return {"content": [text_block(value)]}
    if isinstance(value, list):
        return {"content": value}
    if isinstance(value, dict) and ("content" in value or "structuredContent" in value):
        result = dict(value)
        if "content" not in result:
            # server/tools.mdx "Structured Content": a tool returning structured content SHOULD
            # also return it serialized in a TextContent block.
            result["content"] = [text_block(json.dumps(result["structuredContent"], ensure_ascii=False))]
        if not isinstance(result["content"], list):
            raise BadHandlerResult("'content' must be a list of content blocks")
        return result
    raise BadHandlerResult(
        "a tool handler must return str, a list of content blocks or a dict with "
        f"'content'/'structuredContent', "
        f"not {type(value).__name__}"
    )


def contents_item(uri: str, mime_type: str | None, **body: str) -> dict[str, Any]:
    """One ``TextResourceContents`` / ``BlobResourceContents``. ``mimeType`` is the row's, or absent
    (optional in schema.ts): ``resources/list`` shows the row's value, and a read must not claim
    a type the listing did not."""
    item: dict[str, Any] = {"uri": uri}
    if mime_type:
        item["mimeType"] = mime_type
    return item | body


def resource_contents(value: Any, uri: str, mime_type: str | None) -> list[dict[str, Any]]:
    """``str`` → text contents, ``bytes`` → blob contents, ``list`` (or one dict) → as given."""
    if isinstance(value, str):
        return [contents_item(uri, mime_type, text=value)]
    if isinstance(value, bytes | bytearray):
        return [contents_item(uri, mime_type, blob=base64.b64encode(bytes(value)).decode("ascii"))]
    if isinstance(value, dict):
        value = [value]
    if isinstance(value, list) and all(isinstance(item, dict) and "uri" in item for item in value):
        return value
    raise BadHandlerResult(
        f"a resource handler must return str, bytes or a list of contents, not {type(value).__name__}"
    )


def prompt_result(value: Any, description: str | None) -> dict[str, Any]:
    if isinstance(value, list):
        result: dict[str, Any] = {"messages": value}
    elif isinstance(value, dict) and isinstance(value.get("messages"), list):
        result = dict(value)
    else:
        raise BadHandlerResult(
            f"a prompt handler must return a list of messages or a GetPromptResult, "
            f"not {type(value).__name__}"
        )
    if description and "description" not in result:
        result["description"] = description
    return result
