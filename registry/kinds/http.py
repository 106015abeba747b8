"""The ``http`` kind: one request to an API on the host allow-list, its reply as the tool's result.

- The request (method, URL template expanded with the arguments, static headers, body) is built
  by ``http_client/request.py``; the reply is mapped by ``http_client/reply.py``.
- It goes out on the worker's pooled session (``http_client/clients.py``: keep-alive connections,
  a bound per host), or on a one-shot session on a loop no runtime serves.
- ``http_timeout`` is a deadline for the whole call (connect, send, every byte of the reply), not
  per network phase.
- The host of the expanded URL must match ``REGISTRY_HTTP_ALLOWED_HOSTS`` (exact names, or
  ``*.example.com`` for subdomains) at *call* time, so tightening the setting takes effect without
  editing rows; with ``REGISTRY_HTTP_FORBID_PRIVATE`` its address must be public too
  (``http_client/guard.py``). Redirects are not followed (a redirect could leave the allow-list).
- An idempotent tool (``idempotentHint``, or GET) retries a connection error or a 502/503/504
  ``REGISTRY_HTTP_RETRIES`` times with jittered exponential backoff, inside its deadline; any other
  tool is never retried by us (the upstream may have acted on the first request). Each attempt
  is signed afresh. A ``Retry-After`` of delta-seconds (RFC 9110 §10.2.3) is honoured: the pause
  is at least that long, and one longer than ``MAX_RETRY_AFTER`` ends the retries (the upstream
  says "not soon"). (aiohttp itself resends a GET, PUT or DELETE once when a kept-alive
  connection turns out closed before any byte of an answer, RFC 9112 §9.3.1.1; a POST or PATCH,
  never.) ``Tool.http_max_concurrency`` caps its calls in flight on this worker.
- An optional secret header is read from an environment variable at call time; it is never
  stored in the database nor echoed in errors. Only variables that ``secret_env`` allows are sent
  (checked again here: a row may predate the rule or have been written around validation). The
  signing secret (``http_client/signing.py``) follows the same rule.
- Calling as the user (``http_connection``): the caller's own token at a provider as the bearer
  token, the user asked to connect when there is none (``http_client/acting.py``). A 401 to it:
  the vault refreshes or drops it and the call runs once more; a 403 keeps it (RFC 6750 §3.1:
  valid, not allowed) and is the service's error, except an ``insufficient_scope`` challenge whose
  scope the operator's provider allows: the user connects again for it (``acting.step_up``) and
  the call runs once more (``http_client/challenge.py``).
- Forwarded context, when the row asks: the caller's principal id, W3C trace context
  (``http_client/forwarding.py``).
- Every failure (host not allowed, timeout, connection error, HTTP ≥ 300, oversized reply) is a
  ``ToolError``, so the client gets ``isError: true`` with a clear message.
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import time
from typing import Any
from urllib.parse import urlsplit

import aiohttp
import yarl
from multidict import CIMultiDictProxy

from mcp_protocol import tracing
from mcp_protocol.context import Context
from mcp_protocol.errors import ToolError

from ..serving.specs import ToolSpec
from .http_client import acting, challenge, config, forwarding, guard, reply, request, secret_env, signing
from .http_client.clients import UpstreamClients

MAX_REPLY_BYTES = 1024 * 1024
RETRY_STATUSES = frozenset({502, 503, 504})  # the gateway or the service says "not now"
MAX_BACKOFF = 2.0  # s: the longest pause between two attempts
MAX_RETRY_AFTER = 5.0  # s: a longer Retry-After is not waited for
logger = logging.getLogger(__name__)
Headers = CIMultiDictProxy[str]  # a reply's headers (aiohttp's, case-insensitive)


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
    if not guard.host_allowed(host, config.allowed_hosts()):
        raise ToolError(
            f"Tool {spec.name!r} cannot call {host!r}: the host is not in REGISTRY_HTTP_ALLOWED_HOSTS"
        )
    problem = guard.address_problem(host)
    if problem:
        raise ToolError(f"Tool {spec.name!r} cannot call {problem}")
    if spec.http_secret_header:
        outgoing.headers[spec.http_secret_header] = _secret(spec, spec.http_secret_env)
    token = ""
    if spec.http_connection:
        # After the host checks: a token is fetched (and the user asked to connect) only for a
        # call that may go out.
        token = await acting.bearer(spec.name, spec.http_connection, ctx)
        outgoing.headers["Authorization"] = f"Bearer {token}"
    if spec.http_forward_principal:
        outgoing.headers.update(forwarding.principal_headers(ctx.principal))
    if spec.http_forward_trace:
        outgoing.headers.update(forwarding.trace_headers(ctx.meta))
    key = None
    if spec.http_signing_secret_env:
        key = _secret(spec, spec.http_signing_secret_env).encode("utf-8")
    status, headers, body = await _exchange(spec, outgoing, host, key, clients)
    if status == 401 and spec.http_connection:
        # The service refused the user's token (revoked, expired early): the vault refreshes or
        # drops it, and the user gets a new token or is asked to connect again (acting.forget).
        await acting.forget(ctx.principal, spec.http_connection, token)
        token = await acting.bearer(spec.name, spec.http_connection, ctx, refused=True)
        outgoing.headers["Authorization"] = f"Bearer {token}"
        status, headers, body = await _exchange(spec, outgoing, host, key, clients)
    refusal = _refusal(status, headers, body)
    if refusal is not None and refusal.insufficient_scope and spec.http_connection:
        # 2025-11-25 basic/authorization.mdx "Scope Challenge Handling": connect again for the
        # scope (when the operator's bound allows it: acting.step_up), then once more; a second
        # refusal is the service's answer.
        token = await acting.step_up(f"Tool {spec.name!r}", spec.http_connection, ctx, refusal, host, token)
        outgoing.headers["Authorization"] = f"Bearer {token}"
        status, headers, body = await _exchange(spec, outgoing, host, key, clients)
        refusal = _refusal(status, headers, body)
    content_type = headers.get("Content-Type", "")
    text = body.decode(_charset(content_type), errors="replace")
    if refusal is not None and refusal.insufficient_scope:
        raise ToolError(f"Tool {spec.name!r}: " + refusal.explain(host))
    if not 200 <= status < 300:  # a plain 403 too: the service's reason (the credentials kept)
        raise reply.failure(spec, host, status, text, content_type)
    return reply.success(spec, text, content_type)


def _refusal(status: int, headers: Headers, body: bytes) -> challenge.Forbidden | None:
    """A 403 read (RFC 6750 §3.1: valid credentials, not allowed: kept, never told to the vault)."""
    if status != 403:
        return None
    content_type = headers.get("Content-Type", "")
    text = body.decode(_charset(content_type), errors="replace")
    return challenge.forbidden(headers.get("WWW-Authenticate", ""), text, content_type)


async def _exchange(spec: ToolSpec, outgoing: request.Outgoing, host: str, key: bytes | None,
                    clients: UpstreamClients) -> tuple[int, Headers, bytes]:
    try:
        # A per-phase timeout (connect, each read) would let a server sending a byte just inside
        # it hold the call forever; asyncio.timeout bounds the whole exchange, body included, by
        # the row's timeout: waiting for a slot, every attempt and every pause between them.
        async with asyncio.timeout(spec.http_timeout), clients.limit(spec.name, spec.http_max_concurrency):
            async with clients.session() as session:
                return await _attempts(session, spec, outgoing, host, key)
    except TimeoutError:
        raise ToolError(f"Tool {spec.name!r}: {host} did not answer within {spec.http_timeout:g} s") from None
    except aiohttp.ClientConnectorError as exc:
        if isinstance(exc.os_error, guard.PrivateAddress):
            raise ToolError(f"Tool {spec.name!r} cannot call {exc.os_error}") from None
        raise _failed(spec, host, exc) from None
    except aiohttp.ClientError as exc:
        raise _failed(spec, host, exc) from None


def _failed(spec: ToolSpec, host: str, exc: Exception) -> ToolError:
    return ToolError(f"Tool {spec.name!r}: request to {host} failed ({type(exc).__name__}: {exc})")


def _backoff(attempt: int) -> float:
    """Full jitter (AWS Architecture Blog, "Exponential Backoff and Jitter"): a random pause up to
    BACKOFF * 2**attempt, so callers that failed together do not come back together."""
    ceiling = min(MAX_BACKOFF, float(config.get("REGISTRY_HTTP_RETRY_BACKOFF")) * 2**attempt)
    return random.uniform(0, ceiling)  # jitter, not a secret


async def _attempts(
    session: aiohttp.ClientSession, spec: ToolSpec, outgoing: request.Outgoing, host: str, key: bytes | None
) -> tuple[int, Headers, bytes]:
    retries = int(config.get("REGISTRY_HTTP_RETRIES")) if spec.idempotent else 0
    for attempt in range(retries + 1):
        if key is not None:
            outgoing.headers.update(signing.headers(
                key, spec.http_signing_scheme, int(time.time()), outgoing.method, outgoing.url, outgoing.body,
            ))
        last = attempt == retries
        pause = _backoff(attempt)
        try:
            status, headers, body = await _send(session, spec, outgoing, host)
        except aiohttp.ClientConnectionError as exc:
            private = isinstance(getattr(exc, "os_error", None), guard.PrivateAddress)
            if last or private:
                raise
            logger.info("tool %r: %s, retry %d of %d", spec.name, type(exc).__name__, attempt + 1, retries)
        else:
            asked = _seconds(headers.get("Retry-After"))
            if last or status not in RETRY_STATUSES or (asked is not None and asked > MAX_RETRY_AFTER):
                return status, headers, body
            pause = max(pause, asked or 0.0)
            logger.info("tool %r: HTTP %d, retry %d of %d", spec.name, status, attempt + 1, retries)
        await asyncio.sleep(pause)
    raise AssertionError("unreachable: the last attempt returns or raises")


def _seconds(retry_after: str | None) -> float | None:
    """A Retry-After of delta-seconds; None when absent or an HTTP-date (not worth a clock)."""
    return float(retry_after) if retry_after and retry_after.strip().isdigit() else None


async def _send(
    session: aiohttp.ClientSession, spec: ToolSpec, outgoing: request.Outgoing, host: str
) -> tuple[int, Headers, bytes]:
    # With tracing on, each attempt is a CLIENT span of the request's trace (HTTP client semantic
    # conventions: named by the method; the URL is left out, its query may carry arguments), and
    # a tool that forwards trace context sends this span's, so the upstream's spans are its
    # children; with tracing off the carrier is empty and the client's _meta context stays.
    attributes = {"http.request.method": outgoing.method, "server.address": host}
    with tracing.child(outgoing.method, attributes, client=True) as span:
        if spec.http_forward_trace:
            outgoing.headers.update(tracing.carrier())
        # encoded=True: sent as built and checked (http_client/url_guard.py), not re-normalized.
        async with session.request(
            outgoing.method, yarl.URL(outgoing.url, encoded=True), data=outgoing.body,
            headers=outgoing.headers, allow_redirects=False,
        ) as response:
            if span is not None:
                span.set_attribute("http.response.status_code", response.status)
            received = bytearray()
            async for chunk in response.content.iter_any():
                received += chunk
                if len(received) > MAX_REPLY_BYTES:
                    too_big = f"the reply from {host} exceeds {MAX_REPLY_BYTES} bytes"
                    raise ToolError(f"Tool {spec.name!r}: {too_big}")
            return response.status, response.headers, bytes(received)


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
