"""``PublicOnlyResolver``: aiohttp's default resolver, keeping public addresses only while
``forbid_private()`` says so (asked per lookup, so a setting changed at run time applies).

aiohttp connects to the addresses its resolver returns, so no second lookup can differ from the
one checked (DNS rebinding). An IP literal never reaches a resolver: ``rules.url_problem`` checks it.
"""

from __future__ import annotations

import socket
from collections.abc import Callable

from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.resolver import DefaultResolver

from .rules import is_public


class PrivateAddress(OSError):
    """Every address a name resolved to is private (aiohttp reports it as a connection error)."""


class PublicOnlyResolver(AbstractResolver):
    def __init__(self, forbid_private: Callable[[], bool], setting: str = "") -> None:
        self._inner = DefaultResolver()
        self._forbid_private = forbid_private
        self._setting = setting

    async def resolve(self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
                      ) -> list[ResolveResult]:
        found = await self._inner.resolve(host, port, family)
        if not self._forbid_private():
            return found
        public = [r for r in found if is_public(r["host"])]
        if not public:
            because = f" and {self._setting} is on" if self._setting else ""
            raise PrivateAddress(f"{host}: it resolves only to private addresses{because}")
        return public

    async def close(self) -> None:
        await self._inner.close()
