"""An upstream's reply as a ``CallToolResult``, and its error as the message the client reads.

Success (2xx):

- a JSON object with a ``content`` list is taken as a ``CallToolResult`` (an upstream written for
  MCP answers in its shape), unless the row names a result pointer (then it is plain data);
- otherwise the part of the JSON the row's result pointer names (RFC 6901; empty: all of it)
  becomes ``structuredContent`` when it is an object, and ``{"result": value}`` when it is not
  and the tool declares an ``outputSchema`` (structuredContent is an object, server/tools.mdx
  "Structured Content"; the OpenAPI import wraps array replies' schemas the same way); the text
  block carries the same JSON (for clients that read only content). The core then validates it
  against the ``outputSchema``;
- a body that is not JSON is one text block.

Failure (any other status): ``ToolError`` with the upstream's own message when its body says one
(``{"message"}``, ``{"error": "..."}``, ``{"error": {"message"}}``, ``{"detail"}``, RFC 9457
problem details ``title``/``detail``), else the start of the body.
"""

from __future__ import annotations

import json
from typing import Any

from mcp_protocol.errors import ToolError

from ...serving.results import text_block, tool_result
from ...serving.specs import ToolSpec

SNIPPET = 500
RESULT_KEYS = ("content", "structuredContent", "isError")


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def resolve_pointer(document: Any, pointer: str) -> Any:
    """RFC 6901 §4: the value ``pointer`` names in ``document``; ``KeyError`` if none."""
    if not pointer:
        return document
    value = document
    for token in pointer[1:].split("/"):
        token = token.replace("~1", "/").replace("~0", "~")
        if isinstance(value, dict) and token in value:
            value = value[token]
        elif isinstance(value, list) and token.isdigit() and (token == "0" or not token.startswith("0")) \
                and int(token) < len(value):
            value = value[int(token)]
        else:
            raise KeyError(pointer)
    return value


def parse_json(text: str, content_type: str) -> tuple[bool, Any]:
    if "json" in content_type or text.lstrip().startswith(("{", "[")):
        try:
            return True, json.loads(text)
        except ValueError:
            pass
    return False, None


def success(spec: ToolSpec, text: str, content_type: str) -> dict[str, Any]:
    is_json, data = parse_json(text, content_type)
    if not is_json:
        return {"content": [text_block(text)]}
    if not spec.http_result_pointer and isinstance(data, dict) and isinstance(data.get("content"), list):
        return tool_result({k: v for k, v in data.items() if k in RESULT_KEYS})
    try:
        selected = resolve_pointer(data, spec.http_result_pointer)
    except KeyError:
        pointer = spec.http_result_pointer
        raise ToolError(f"Tool {spec.name!r}: the reply has nothing at {pointer!r}") from None
    if isinstance(selected, dict):
        return {"content": [text_block(_dump(selected))], "structuredContent": selected}
    if spec.structured_output:
        return {"content": [text_block(_dump(selected))], "structuredContent": {"result": selected}}
    return {"content": [text_block(_dump(selected))]}


def upstream_message(text: str, content_type: str) -> str:
    """What the upstream said went wrong, in its own words when its JSON has them."""
    is_json, data = parse_json(text, content_type)
    if is_json and isinstance(data, dict):
        error = data.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return error["message"]
        if isinstance(error, str):
            return error
        if isinstance(data.get("message"), str):
            return str(data["message"])
        title, detail = data.get("title"), data.get("detail")
        if isinstance(title, str) and isinstance(detail, str):
            return f"{title}: {detail}"
        if isinstance(detail, str) or isinstance(title, str):
            return str(detail if isinstance(detail, str) else title)
    return text[:SNIPPET] + ("…" if len(text) > SNIPPET else "")


def failure(spec: ToolSpec, host: str, status: int, text: str, content_type: str) -> ToolError:
    message = upstream_message(text, content_type)
    return ToolError(f"Tool {spec.name!r}: {host} answered HTTP {status}: {message}")
