"""DNS-rebinding protection for ``/mcp``: the Host and Origin allow-lists.

[L][26] basic/transports.mdx "Security Warning": servers MUST validate ``Origin`` (invalid → 403,
[11]) and SHOULD bind to localhost when local. A rebinding attack reaches a loopback server from a
browser with a foreign ``Host``, so:

- ``Host``: ``MCP["ALLOWED_HOSTS"]`` when set (Django's pattern syntax: ``example.com``,
  ``.example.com``, ``*``); otherwise, on a connection that arrived at a loopback address, only
  loopback names (the SDKs' default); otherwise Django's ``ALLOWED_HOSTS``. A bad Host → 421
  Misdirected Request (as the Python SDK).
- ``Origin`` (only when present): in ``MCP["ALLOWED_ORIGINS"]`` (``*`` allows all), or the same
  origin as the request's Host, or a loopback origin on a loopback connection. Otherwise 403.

Decisions depend only on (host, origin, local address) and are cached.
"""

from __future__ import annotations

from functools import lru_cache
from urllib.parse import urlsplit

from django.http.request import split_domain_port, validate_host

from .responses import HTTPError

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1", "[::1]"})


def is_loopback_address(address: str | None) -> bool:
    if not address:
        return False
    return address in LOOPBACK_NAMES or address.startswith("127.") or address == "::ffff:127.0.0.1"


def _host_name(host: str) -> str:
    domain, _port = split_domain_port(host.lower())
    return str(domain)


class OriginGuard:
    def __init__(self, allowed_hosts: list[str], allowed_origins: list[str], django_hosts: list[str]) -> None:
        self.allowed_hosts = [h.lower() for h in allowed_hosts]
        self.allowed_origins = {o.rstrip("/").lower() for o in allowed_origins}
        self.django_hosts = [h.lower() for h in django_hosts]
        self.check = lru_cache(maxsize=512)(self._check)

    def host_allowed(self, host: str, local_address: str | None) -> bool:
        if not host:
            return False
        if self.allowed_hosts:
            if "*" in self.allowed_hosts or host.lower() in self.allowed_hosts:
                return True
            domain = _host_name(host)
            return bool(domain) and validate_host(domain, self.allowed_hosts)
        domain = _host_name(host)
        if is_loopback_address(local_address):
            return domain in LOOPBACK_NAMES or domain.startswith("127.")
        return bool(domain) and validate_host(domain, self.django_hosts)

    def origin_allowed(self, origin: str, host: str, local_address: str | None) -> bool:
        normalized = origin.rstrip("/").lower()
        if "*" in self.allowed_origins or normalized in self.allowed_origins:
            return True
        parts = urlsplit(normalized)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            return False  # "null" and other opaque origins
        if parts.netloc == host.lower():
            return True  # same origin as the (already validated) Host
        name = parts.hostname or ""
        return is_loopback_address(local_address) and is_loopback_address(name)

    def _check(self, host: str, origin: str | None, local_address: str | None) -> None:
        if not self.host_allowed(host, local_address):
            raise HTTPError(421, f"Misdirected Request: invalid Host header {host!r}")
        if origin is not None and not self.origin_allowed(origin, host, local_address):
            raise HTTPError(403, f"Forbidden: invalid Origin header {origin!r}")
