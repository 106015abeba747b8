"""The outbound rules (``mcp_django.outbound``) on every request to an upstream, with the http
kind's settings: an upstream URL is written by a staff user and each request to it may reach the
server's own network (SSRF), as an http tool's may.

- ``url_problem``: http(s) only, no userinfo, the host in ``REGISTRY_HTTP_ALLOWED_HOSTS``, an IP
  literal public while ``REGISTRY_HTTP_FORBID_PRIVATE`` is on; checked on the configured URL before
  anything is sent and again on every request the SDK makes (the SSE transport's message endpoint,
  a same-origin redirect, the OAuth token URL);
- a name's addresses: while ``REGISTRY_HTTP_FORBID_PRIVATE`` is on, ``PinnedBackend`` (the
  network backend of ``GuardedTransport``'s httpcore2 pool) resolves the host once, keeps its
  public addresses (none: refused) and connects to one of *those*: the address checked is the
  one connected to, so a DNS answer that changes afterwards (rebinding) changes nothing. TLS
  still verifies the certificate against the host name (httpcore2 passes the URL's host as the
  SNI and verification name to ``start_tls``), and the ``Host`` header is the URL's.
- the calls' lean path (``wire.py``) has its own pooled aiohttp session (``call_session``) whose
  resolver is the http kind's ``PublicOnlyResolver`` with these settings: aiohttp connects to the
  addresses the resolver returned, so the same pinning holds there; ``wire.py`` checks the URL
  before each POST.
"""

from __future__ import annotations

import asyncio
import functools
import socket
from typing import Any

import aiohttp
import httpcore2
import httpx2

from mcp_django.compat.httpx2 import use_network_backend
from mcp_django.outbound.resolver import PublicOnlyResolver
from mcp_django.outbound.rules import Policy, ip_literal, is_public, url_problem

from ..kinds.http_client import config as http_config
from .errors import UpstreamRefused


def policy() -> Policy:
    return Policy(schemes=("http", "https"), allowed_hosts=tuple(http_config.allowed_hosts()),
                  forbid_private=bool(http_config.get("REGISTRY_HTTP_FORBID_PRIVATE")))


@functools.lru_cache(maxsize=256)
def _problem(url: str, rules: Policy) -> str | None:
    return url_problem(url, rules)


def check_url(url: str) -> None:
    """Raise ``UpstreamRefused`` when the rules refuse ``url`` (before any lookup). The verdict is
    cached per (URL, rules as they are now): the calls' hot path checks before each POST."""
    problem = _problem(url, policy())
    if problem is not None:
        raise UpstreamRefused(f"{problem} (REGISTRY_HTTP_ALLOWED_HOSTS, REGISTRY_HTTP_FORBID_PRIVATE)")


async def public_addresses(host: str, port: int) -> list[str]:
    """The addresses to connect to for ``host``: all of them, or only the public ones while private
    addresses are forbidden (``UpstreamRefused`` when none is)."""
    found = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    addresses = list(dict.fromkeys(str(info[4][0]) for info in found))
    if not policy().forbid_private:
        return addresses
    public = [a for a in addresses if is_public(a)]
    if not public:
        raise UpstreamRefused(f"{host} resolves only to private addresses ({', '.join(addresses)}) and "
                              "REGISTRY_HTTP_FORBID_PRIVATE is on")
    return public


class PinnedBackend(httpcore2.AsyncNetworkBackend):
    """httpcore2's default backend, connecting to the addresses ``public_addresses`` checked."""

    def __init__(self) -> None:
        self._inner = httpcore2.AnyIOBackend()

    async def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                          local_address: str | None = None,
                          socket_options: Any = None) -> httpcore2.AsyncNetworkStream:
        if not policy().forbid_private or ip_literal(host) is not None:  # a literal: url_problem checked it
            return await self._inner.connect_tcp(host, port, timeout=timeout, local_address=local_address,
                                                 socket_options=socket_options)
        try:
            addresses = await public_addresses(host, port)
        except OSError as exc:
            raise httpcore2.ConnectError(f"{host}: {exc}") from None
        failure: Exception | None = None
        for address in addresses:
            try:
                return await self._inner.connect_tcp(address, port, timeout=timeout,
                                                     local_address=local_address,
                                                     socket_options=socket_options)
            except (httpcore2.ConnectError, httpcore2.ConnectTimeout) as exc:
                failure = exc
        raise failure or httpcore2.ConnectError(f"{host}: no address")

    async def connect_unix_socket(self, path: str, timeout: float | None = None,
                                  socket_options: Any = None) -> httpcore2.AsyncNetworkStream:
        raise httpcore2.ConnectError("upstreams are reached over TCP only")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


class GuardedTransport(httpx2.AsyncHTTPTransport):
    """httpx2's transport: the URL rules on every request, the addresses pinned by ``PinnedBackend``."""

    def __init__(self) -> None:
        super().__init__()
        # The pool httpx2 would build, with our network backend (httpx2 has no parameter for it).
        use_network_backend(self, PinnedBackend())

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        check_url(str(request.url))
        return await super().handle_async_request(request)


def _forbid_private() -> bool:
    return bool(http_config.get("REGISTRY_HTTP_FORBID_PRIVATE"))


def call_session(config: Any) -> aiohttp.ClientSession:
    """The pooled aiohttp session of one upstream on one loop (``pool.py``): its resolver keeps
    public addresses only while ``REGISTRY_HTTP_FORBID_PRIVATE`` is on (an IP literal never
    reaches it: ``check_url`` refused a private one); no proxy from the environment (it would see
    the credentials); the connect timeout is the row's, the whole call's is the caller's."""
    connector = aiohttp.TCPConnector(
        limit=max(1, int(config.max_concurrency)) + 4,  # the cap's calls, plus replies and cancels
        keepalive_timeout=float(http_config.get("REGISTRY_HTTP_KEEPALIVE_SECONDS")),
        resolver=PublicOnlyResolver(_forbid_private, "REGISTRY_HTTP_FORBID_PRIVATE"),
    )
    timeout = aiohttp.ClientTimeout(total=None, sock_connect=float(config.connect_timeout))
    return aiohttp.ClientSession(connector=connector, timeout=timeout, trust_env=False, auto_decompress=True)
