"""The ``http`` kind: POST the arguments as JSON to a URL on the host allow-list.

- The request goes out on the worker's pooled session (``upstream/clients.py``: keep-alive
  connections, a bound per host), or on a one-shot session on a loop no runtime serves.
- ``http_timeout`` is a deadline for the whole call (connect, send, every byte of the reply), not
  per network phase.
- The host must match ``settings.REGISTRY_HTTP_ALLOWED_HOSTS`` (exact names, or ``*.example.com``
  for subdomains) at *call* time, so tightening the setting takes effect without editing rows.
  Redirects are not followed (a redirect could leave the allow-list).
- An optional secret header is read from an environment variable at call time; it is never
  stored in the database nor echoed in errors. Only variables that ``secret_env`` allows are sent
  (checked again here: a row may predate the rule or have been written around validation).
- The reply maps to a result: a JSON object with ``content`` is taken as a ``CallToolResult``;
  any other JSON object becomes ``structuredContent`` (plus its JSON text); other bodies become
  text. Every failure (host not allowed, timeout, connection error, HTTP ≥ 400, oversized reply)
  is a ``ToolError``, so the client gets ``isError: true`` with a clear message.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from typing import Any
from urllib.parse import urlsplit

import aiohttp

from mcp_protocol.context import Context
from mcp_protocol.errors import ToolError

from .. import secret_env
from ..results import text_block, tool_result
from ..snapshot import ToolSpec
from ..upstream import config
from ..upstream.clients import UpstreamClients

MAX_REPLY_BYTES = 1024 * 1024
logger = logging.getLogger(__name__)


def host_allowed(host: str, allowed: list[str]) -> bool:
    host = host.lower().rstrip(".")
    for entry in allowed:
        if entry == "*" or entry == host:
            return True
        if entry.startswith("*.") and host.endswith(entry[1:]):
            return True
    return False


async def execute(
    spec: ToolSpec, arguments: dict[str, Any], ctx: Context, clients: UpstreamClients
) -> dict[str, Any]:
    url = urlsplit(spec.http_url)
    host = url.hostname or ""
    if not host_allowed(host, config.allowed_hosts()):
        raise ToolError(
            f"Tool {spec.name!r} cannot call {host!r}: the host is not in REGISTRY_HTTP_ALLOWED_HOSTS"
        )
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/plain;q=0.9, */*;q=0.5",
        "User-Agent": "mcpsite-http-tool",
        "X-MCP-Tool": spec.name,
    }
    if spec.http_secret_header:
        if not secret_env.allowed(spec.http_secret_env):
            # Saved around validation (a raw write, an older row, a tightened rule): never sent.
            logger.warning("tool %r names environment variable %r as its secret, which a tool may not "
                           "send: the call is refused", spec.name, spec.http_secret_env)
            raise ToolError(f"Tool {spec.name!r} is misconfigured: {spec.http_secret_env!r} cannot be "
                            f"sent ({secret_env.rule()})")
        secret = os.environ.get(spec.http_secret_env)
        if not secret:
            raise ToolError(
                f"Tool {spec.name!r} is misconfigured: environment variable "
                f"{spec.http_secret_env!r} is not set"
            )
        headers[spec.http_secret_header] = secret
    try:
        # A per-phase timeout (connect, each read) would let a server sending a byte just inside
        # it hold the call forever; asyncio.timeout bounds the whole exchange, body included, by
        # the row's timeout.
        async with asyncio.timeout(spec.http_timeout), clients.session() as session:
            status, content_type, body = await _post(session, spec, arguments, headers, host)
    except TimeoutError:
        raise ToolError(f"Tool {spec.name!r}: {host} did not answer within {spec.http_timeout:g} s") from None
    except aiohttp.ClientError as exc:
        raise ToolError(
            f"Tool {spec.name!r}: request to {host} failed ({type(exc).__name__}: {exc})"
        ) from None
    text = body.decode(_charset(content_type), errors="replace")
    if status >= 300:
        snippet = text[:500] + ("…" if len(text) > 500 else "")
        raise ToolError(f"Tool {spec.name!r}: {host} answered HTTP {status}: {snippet}")
    return map_reply(text, content_type)


async def _post(
    session: aiohttp.ClientSession, spec: ToolSpec, arguments: dict[str, Any], headers: dict[str, str],
    host: str,
) -> tuple[int, str, bytes]:
    body = json.dumps(arguments, ensure_ascii=False).encode("utf-8")
    async with session.request(
        "POST", spec.http_url, data=body, headers=headers, allow_redirects=False
    ) as response:
        reply = bytearray()
        async for chunk in response.content.iter_any():
            reply += chunk
            if len(reply) > MAX_REPLY_BYTES:
                raise ToolError(f"Tool {spec.name!r}: the reply from {host} exceeds {MAX_REPLY_BYTES} bytes")
        return response.status, response.headers.get("Content-Type", ""), bytes(reply)


def _charset(content_type: str) -> str:
    """The ``charset`` parameter of a Content-Type (RFC 9110 §8.3.2), else UTF-8."""
    for part in content_type.split(";")[1:]:
        name, _, value = part.strip().partition("=")
        if name.lower() == "charset" and value:
            charset = value.strip('"')
            try:
                "".encode(charset)
            except LookupError:
                return "utf-8"
            return charset
    return "utf-8"


def map_reply(text: str, content_type: str) -> dict[str, Any]:
    if "json" in content_type or text.lstrip().startswith(("{", "[")):
        try:
            data = json.loads(text)
        except ValueError:
            return {"content": [text_block(text)]}
        if isinstance(data, dict) and isinstance(data.get("content"), list):
            return tool_result(
                {k: v for k, v in data.items() if k in ("content", "structuredContent", "isError")}
            )
        if isinstance(data, dict):
            return {"content": [text_block(json.dumps(data, ensure_ascii=False))], "structuredContent": data}
        return {"content": [text_block(json.dumps(data, ensure_ascii=False))]}
    return {"content": [text_block(text)]}
