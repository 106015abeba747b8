"""Where an http tool may connect: the project's outbound rules (``mcp_django.outbound``) with the
``REGISTRY_HTTP_*`` settings, checked on the address actually connected to.

- ``host_allowed``: the expanded URL's host against ``REGISTRY_HTTP_ALLOWED_HOSTS`` (exact names,
  ``*.example.com`` for subdomains, ``*`` for any), at call time.
- With ``REGISTRY_HTTP_FORBID_PRIVATE`` true, an allowed *name* must also resolve to public
  addresses only: a name on the allow-list whose DNS answer turns private (``10.0.0.5``,
  ``127.0.0.1``, ``169.254.169.254`` the cloud metadata service, ``fd00::/8``...), by mistake or by
  DNS rebinding, would otherwise let a tool reach the server's own network (SSRF). The check
  sits in the pooled session's resolver (``public_only_resolver``): aiohttp
  connects to the addresses the resolver returns, so no second lookup can differ from the one
  checked. An IP literal never reaches a resolver, so ``address_problem`` checks it before the
  request.

The rules themselves (what "public" means, how an allow-list entry matches) live in
``mcp_django.outbound.rules``, shared with every other place that fetches (client metadata
documents, upstream servers); this module only binds them to this kind's settings.
"""

from __future__ import annotations

from mcp_django.outbound import resolver
from mcp_django.outbound.resolver import PrivateAddress
from mcp_django.outbound.rules import host_allowed, ip_literal, is_public

from . import config

__all__ = [
    "PrivateAddress",
    "address_problem",
    "forbid_private",
    "host_allowed",
    "is_public",
    "public_only_resolver",
]


def forbid_private() -> bool:
    return bool(config.get("REGISTRY_HTTP_FORBID_PRIVATE"))


def address_problem(host: str) -> str | None:
    """Why ``host``, when it is an IP literal, may not be called (None: fine, or a name)."""
    literal = ip_literal(host)
    if literal is not None and forbid_private() and not is_public(literal):
        return f"{host}: it is a private address and REGISTRY_HTTP_FORBID_PRIVATE is on"
    return None


def public_only_resolver() -> resolver.PublicOnlyResolver:
    """The pooled session's resolver, keeping only public addresses while
    ``REGISTRY_HTTP_FORBID_PRIVATE`` is on (read per lookup, like the other settings)."""
    return resolver.PublicOnlyResolver(forbid_private, "REGISTRY_HTTP_FORBID_PRIVATE")
