"""Where an http tool may connect: the host allow-list, and (when a setting says so) no private
address, checked on the address actually connected to.

- ``host_allowed``: the expanded URL's host against ``REGISTRY_HTTP_ALLOWED_HOSTS`` (exact names,
  ``*.example.com`` for subdomains, ``*`` for any), at call time.
- With ``REGISTRY_HTTP_FORBID_PRIVATE`` true, an allowed *name* must also resolve to public
  addresses only: a name on the allow-list whose DNS answer turns private (``10.0.0.5``,
  ``127.0.0.1``, ``169.254.169.254`` the cloud metadata service, ``fd00::/8``...), by mistake or by
  DNS rebinding, would otherwise let a tool reach the server's own network (SSRF). The check
  sits in the session's resolver (``PublicOnlyResolver``): aiohttp connects to the addresses the
  resolver returns, so no second lookup can differ from the one checked. An IP literal never
  reaches a resolver, so ``address_problem`` checks it before the request.

"Public" is ``ipaddress``'s ``is_global`` (the IANA special-purpose registries), and an IPv4-mapped
IPv6 address is judged as the IPv4 address it carries.
"""

from __future__ import annotations

import ipaddress
import socket

from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.resolver import DefaultResolver

from . import config


def host_allowed(host: str, allowed: list[str]) -> bool:
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


def forbid_private() -> bool:
    return bool(config.get("REGISTRY_HTTP_FORBID_PRIVATE"))


def address_problem(host: str) -> str | None:
    """Why ``host``, when it is an IP literal, may not be called (None: fine, or a name)."""
    try:
        ipaddress.ip_address(host.strip("[]").split("%", 1)[0])
    except ValueError:
        return None
    if forbid_private() and not is_public(host.strip("[]")):
        return f"{host}: it is a private address and REGISTRY_HTTP_FORBID_PRIVATE is on"
    return None


class PrivateAddress(OSError):
    """Every address a name resolved to is private (aiohttp reports it as a connection error)."""


class PublicOnlyResolver(AbstractResolver):
    """The default resolver, keeping only public addresses while ``REGISTRY_HTTP_FORBID_PRIVATE``
    is on (read per lookup, like the other settings)."""

    def __init__(self) -> None:
        self._inner = DefaultResolver()

    async def resolve(self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
                      ) -> list[ResolveResult]:
        found = await self._inner.resolve(host, port, family)
        if not forbid_private():
            return found
        public = [r for r in found if is_public(r["host"])]
        if not public:
            raise PrivateAddress(
                f"{host}: it resolves only to private addresses and REGISTRY_HTTP_FORBID_PRIVATE is on")
        return public

    async def close(self) -> None:
        await self._inner.close()
