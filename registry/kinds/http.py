"""The ``http`` kind: one request to an API on the host allow-list, its reply as the tool's result.

- The request (method, URL template expanded with the arguments, static headers, body) is built
  by ``upstream/request.py``; the reply is mapped by ``upstream/reply.py``.
- It goes out on the worker's pooled session (``upstream/clients.py``: keep-alive connections,
  a bound per host), or on a one-shot session on a loop no runtime serves.
- ``http_timeout`` is a deadline for the whole call (connect, send, every byte of the reply), not
  per network phase.
- The host of the expanded URL must match ``REGISTRY_HTTP_ALLOWED_HOSTS`` (exact names, or
  ``*.example.com`` for subdomains) at *call* time, so tightening the setting takes effect without
  editing rows. Redirects are not followed (a redirect could leave the allow-list).
- An optional secret header is read from an environment variable at call time; it is never
  stored in the database nor echoed in errors. Only variables that ``secret_env`` allows are sent
  (checked again here: a row may predate the rule or have been written around validation). The
  signing secret (``upstream/signing.py``) follows the same rule.
- Forwarded context, when the row asks: the caller's principal id, W3C trace context
  (``upstream/forwarding.py``).
- Every failure (host not allowed, timeout, connection error, HTTP ≥ 300, oversized reply) is a
  ``ToolError``, so the client gets ``isError: true`` with a clear message.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from typing import Any
from urllib.parse import urlsplit

import aiohttp

from mcp_protocol.context import Context
from mcp_protocol.errors import ToolError

from .. import secret_env
from ..snapshot import ToolSpec
from ..upstream import config, forwarding, reply, request, signing
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


def _secret(spec: ToolSpec, variable: str) -> str:
    if not secret_env.allowed(variable):
        # Saved around validation (a raw write, an older row, a tightened rule): never sent.
        logger.warning("tool %r names environment variable %r as its secret, which a tool may not "
                       "send: the call is refused", spec.name, variable)
        raise ToolError(f"Tool {spec.name!r} is misconfigured: {variable!r} cannot be "
                        f"sent ({secret_env.rule()})")
    secret = os.environ.get(variable)
    if not secret:
        raise ToolError(f"Tool {spec.name!r} is misconfigured: environment variable {variable!r} is not set")
    return secret


async def execute(
    spec: ToolSpec, arguments: dict[str, Any], ctx: Context, clients: UpstreamClients
) -> dict[str, Any]:
    outgoing = request.build(spec, arguments)
    host = urlsplit(outgoing.url).hostname or ""
    if not host_allowed(host, config.allowed_hosts()):
        raise ToolError(
            f"Tool {spec.name!r} cannot call {host!r}: the host is not in REGISTRY_HTTP_ALLOWED_HOSTS"
        )
    if spec.http_secret_header:
        outgoing.headers[spec.http_secret_header] = _secret(spec, spec.http_secret_env)
    if spec.http_forward_principal:
        outgoing.headers.update(forwarding.principal_headers(ctx.principal))
    if spec.http_forward_trace:
        outgoing.headers.update(forwarding.trace_headers(ctx.meta))
    if spec.http_signing_secret_env:
        key = _secret(spec, spec.http_signing_secret_env).encode("utf-8")
        outgoing.headers.update(signing.headers(key, int(time.time()), outgoing.body))
    try:
        # A per-phase timeout (connect, each read) would let a server sending a byte just inside
        # it hold the call forever; asyncio.timeout bounds the whole exchange, body included, by
        # the row's timeout.
        async with asyncio.timeout(spec.http_timeout), clients.session() as session:
            status, content_type, body = await _send(session, spec, outgoing, host)
    except TimeoutError:
        raise ToolError(f"Tool {spec.name!r}: {host} did not answer within {spec.http_timeout:g} s") from None
    except aiohttp.ClientError as exc:
        raise ToolError(
            f"Tool {spec.name!r}: request to {host} failed ({type(exc).__name__}: {exc})"
        ) from None
    text = body.decode(_charset(content_type), errors="replace")
    if not 200 <= status < 300:
        raise reply.failure(spec, host, status, text, content_type)
    return reply.success(spec, text, content_type)


async def _send(
    session: aiohttp.ClientSession, spec: ToolSpec, outgoing: request.Outgoing, host: str
) -> tuple[int, str, bytes]:
    async with session.request(
        outgoing.method, outgoing.url, data=outgoing.body, headers=outgoing.headers, allow_redirects=False
    ) as response:
        received = bytearray()
        async for chunk in response.content.iter_any():
            received += chunk
            if len(received) > MAX_REPLY_BYTES:
                raise ToolError(f"Tool {spec.name!r}: the reply from {host} exceeds {MAX_REPLY_BYTES} bytes")
        return response.status, response.headers.get("Content-Type", ""), bytes(received)


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
