"""The outbound rules (``mcp_django.outbound``) on every request to an upstream, with the http
kind's settings: an upstream URL is written by a staff user and each request to it may reach the
server's own network (SSRF), as an http tool's may.

- ``url_problem``: http(s) only, no userinfo, the host in ``REGISTRY_HTTP_ALLOWED_HOSTS``, an IP
  literal public while ``REGISTRY_HTTP_FORBID_PRIVATE`` is on; checked on the configured URL before
  anything is sent and again on every request the SDK makes (the SSE transport's message endpoint,
  a same-origin redirect, the OAuth token URL);
- a name's addresses: while ``REGISTRY_HTTP_FORBID_PRIVATE`` is on, ``GuardedTransport`` resolves
  the host before each request and refuses it when ANY address is private. It cannot pin the
  connection to the address checked: the SDK's client is httpx2, whose connection layer resolves
  again when it opens a connection, so a DNS answer changing between the two lookups (rebinding
  with a tiny TTL) is not caught; refusing when any answer is private narrows it. The http kind
  (aiohttp) pins through its resolver; docs/security.md says the difference.
"""

from __future__ import annotations

import asyncio
import socket

import httpx2

from mcp_django.outbound.rules import Policy, ip_literal, is_public, url_problem

from ..kinds.http_client import config as http_config
from .errors import UpstreamRefused


def policy() -> Policy:
    return Policy(schemes=("http", "https"), allowed_hosts=tuple(http_config.allowed_hosts()),
                  forbid_private=bool(http_config.get("REGISTRY_HTTP_FORBID_PRIVATE")))


def check_url(url: str) -> None:
    """Raise ``UpstreamRefused`` when the rules refuse ``url`` (before any lookup)."""
    problem = url_problem(url, policy())
    if problem is not None:
        raise UpstreamRefused(f"{problem} (REGISTRY_HTTP_ALLOWED_HOSTS, REGISTRY_HTTP_FORBID_PRIVATE)")


async def check_addresses(host: str, port: int) -> None:
    """Raise ``UpstreamRefused`` when private addresses are forbidden and ``host`` has one."""
    if not policy().forbid_private or ip_literal(host) is not None:
        return
    try:
        found = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError:
        return  # the connection itself will fail and say so
    private = sorted({str(info[4][0]) for info in found if not is_public(str(info[4][0]))})
    if private:
        raise UpstreamRefused(f"{host} resolves to private addresses ({', '.join(private)}) and "
                              "REGISTRY_HTTP_FORBID_PRIVATE is on")


class GuardedTransport(httpx2.AsyncHTTPTransport):
    """httpx2's transport, checking the rules on every request before sending it."""

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        url = str(request.url)
        check_url(url)
        port = request.url.port or (443 if request.url.scheme == "https" else 80)
        await check_addresses(request.url.host, port)
        return await super().handle_async_request(request)
