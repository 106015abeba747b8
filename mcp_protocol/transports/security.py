"""DNS-rebinding protection for ``/mcp``: the Host and Origin allow-lists.

[L][26] basic/transports.mdx "Security Warning": servers MUST validate ``Origin`` (invalid → 403,
[11]) and SHOULD bind to localhost when local. A rebinding attack reaches a loopback server from a
browser with a foreign ``Host``, so:

- ``Host``: ``MCP["ALLOWED_HOSTS"]`` when set (Django's pattern syntax: ``example.com``,
  ``.example.com``, ``*``); otherwise, on a connection that arrived at a loopback address, only
  loopback names (the SDKs' default); otherwise ``site_hosts`` (the project's own list: Django's
  ``ALLOWED_HOSTS``, handed in by the adapter). A bad Host → 421
  Misdirected Request (as the Python SDK).
- ``Origin`` (only when present): in ``MCP["ALLOWED_ORIGINS"]`` (``*`` allows all), or the same
  origin as the request's Host, or a loopback origin on a loopback connection. Otherwise 403.

Decisions depend only on (host, origin, local address) and are cached. Host patterns are matched
as Django matches ``ALLOWED_HOSTS`` (``split_domain_port`` / ``validate_host`` in
``django.http.request``), written out here so the core needs no Django: the same answers.
"""

from __future__ import annotations

import re
from functools import lru_cache
from urllib.parse import urlsplit

from .responses import HTTPError

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1", "[::1]"})
# A Host header's name and port (RFC 9110 §7.2: uri-host [":" port]): a registered name or IPv4
# address, or an IPv6 literal in brackets (RFC 3986 §3.2.2). Django's ``host_validation_re``.
HOST_RE = re.compile(r"([a-z0-9.-]+|\[[a-f0-9]*:[a-f0-9.:]+\])(?::([0-9]+))?")


def split_domain_port(host: str) -> tuple[str, str]:
    """``(name, port)`` of a Host header, lowercased, without a fully qualified name's trailing dot
    (RFC 1034 §3.1: ``example.com.`` is ``example.com``); ``("", "")`` when it is not a host."""
    match = HOST_RE.fullmatch(host.lower())
    if match is None:
        return "", ""
    domain, port = match.groups(default="")
    return domain.removesuffix("."), port


def validate_host(domain: str, patterns: list[str]) -> bool:
    """Whether ``domain`` (lowercased, no port) matches a pattern: ``*`` matches anything,
    ``.example.com`` matches ``example.com`` and every name under it, anything else exactly."""
    for pattern in patterns:
        pattern = pattern.lower()
        if not pattern:
            continue  # an empty pattern matches nothing, not even an empty name
        if pattern == "*" or pattern == domain:
            return True
        if pattern.startswith(".") and (domain.endswith(pattern) or domain == pattern[1:]):
            return True
    return False


def is_loopback_address(address: str | None) -> bool:
    if not address:
        return False
    return address in LOOPBACK_NAMES or address.startswith("127.") or address == "::ffff:127.0.0.1"


def _host_name(host: str) -> str:
    domain, _port = split_domain_port(host)
    return domain


class OriginGuard:
    """``hosts_setting`` / ``origins_setting``: what the adapter calls the two allow-lists, named in
    the 421 and 403 bodies so an operator who meets one knows what to set (nothing secret: the
    refused value is the client's own)."""

    def __init__(
        self,
        allowed_hosts: list[str],
        allowed_origins: list[str],
        site_hosts: list[str],
        hosts_setting: str = "ALLOWED_HOSTS",
        origins_setting: str = "ALLOWED_ORIGINS",
    ) -> None:
        self.allowed_hosts = [h.lower() for h in allowed_hosts]
        self.allowed_origins = {o.rstrip("/").lower() for o in allowed_origins}
        self.site_hosts = [h.lower() for h in site_hosts]
        self.hosts_setting = hosts_setting
        self.origins_setting = origins_setting
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
        return bool(domain) and validate_host(domain, self.site_hosts)

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
            raise HTTPError(
                421, f"Misdirected Request: invalid Host header {host!r} (not in {self.hosts_setting})"
            )
        if origin is not None and not self.origin_allowed(origin, host, local_address):
            raise HTTPError(
                403, f"Forbidden: invalid Origin header {origin!r} (not in {self.origins_setting})"
            )
