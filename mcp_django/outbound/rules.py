"""The rules of an outbound request: what ``Policy`` allows, and the checks of a URL and of the
addresses its host resolved to.

"Public" is ``ipaddress``'s ``is_global`` (the IANA special-purpose registries: loopback, RFC 1918,
link-local 169.254.0.0/16 with the cloud metadata service, ULA ``fc00::/7``... are not), and an
IPv4-mapped IPv6 address is judged as the IPv4 address it carries (``::ffff:127.0.0.1`` is
loopback).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit


@dataclass(frozen=True, slots=True)
class Policy:
    schemes: tuple[str, ...] = ("https",)
    allowed_hosts: tuple[str, ...] | None = None  # exact names, "*.example.com", "*"; None: any host
    forbid_private: bool = True
    max_bytes: int = 1024 * 1024
    timeout: float = 5.0  # seconds for the whole fetch, every redirect included
    max_redirects: int = 0


def host_allowed(host: str, allowed: Iterable[str]) -> bool:
    host = host.lower().rstrip(".")
    for entry in allowed:
        if entry == "*" or entry == host:
            return True
        if entry.startswith("*.") and host.endswith(entry[1:]):
            return True
    return False


def is_public(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])  # an IPv6 zone ("fe80::1%eth0") is local anyway
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global


def ip_literal(host: str) -> str | None:
    """``host`` as an IP address when it is one (brackets and zone removed), else None."""
    bare = host.strip("[]")
    try:
        ipaddress.ip_address(bare.split("%", 1)[0])
    except ValueError:
        return None
    return bare


def url_problem(url: str, policy: Policy) -> str | None:
    """Why ``policy`` refuses ``url`` before any lookup (None: its host may now be resolved)."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 (a bad port raises here)
    except ValueError as exc:
        return f"{url!r} is not a URL ({exc})"
    if parts.scheme.lower() not in policy.schemes:
        return f"{parts.scheme or 'no'} scheme: only {', '.join(policy.schemes)} URLs are fetched"
    host = (parts.hostname or "").lower()
    if not host:
        return f"{url!r} names no host"
    if parts.username is not None or parts.password is not None:
        return "a URL with credentials (user@host) is not fetched"
    if policy.allowed_hosts is not None and not host_allowed(host, policy.allowed_hosts):
        return f"{host!r} is not an allowed host"
    literal = ip_literal(host)
    if literal is not None and policy.forbid_private and not is_public(literal):
        return f"{host} is a private address"
    return None


def public_only(host: str, addresses: list[str], policy: Policy) -> list[str]:
    """The addresses ``host`` resolved to that ``policy`` lets us connect to (ValueError: none)."""
    if not policy.forbid_private:
        return addresses
    public = [a for a in addresses if is_public(a)]
    if not public:
        raise ValueError(f"{host} resolves only to private addresses")
    return public
