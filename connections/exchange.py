"""A token exchange provider (``Provider.kind``, RFC 8693; issue 42 item 4): for a service that
trusts this server's authorization server (or the same identity provider), the caller's own
access token (the subject token) is exchanged at the provider's token URL for one whose audience
is the service's ``resource``; nothing goes in the vault and there is no connect page.

The subject token is the bearer token the caller of ``/mcp`` presented, which the transport keeps
in a context variable for the request (``mcp_protocol.auth.principal.present``) and which only
the principal it came with can read (``presented``). A caller with none (an API key, anonymous, a
task run later on another worker) cannot be acted for this way: ``CannotActAsUser`` says so.

The caller's token goes only to a token URL at the issuer of that token (``outbound.issuer_problem``:
MCP forbids passing a client's token on; the authorization server that issued it knows it).

Exchanged tokens are cached in this process, per (principal, provider, SHA-256 of the subject
token), until ``MARGIN`` before they expire, at most ``CACHE_MAX`` of them: a new subject token
(the client refreshed) is exchanged afresh, and nothing crosses users or workers. The cache holds
live tokens in memory only; never logged, and its entries' repr shows no token.
"""

from __future__ import annotations

import hashlib
import threading
import time
from typing import Any

from asgiref.sync import sync_to_async
from django.db import close_old_connections

from mcp_protocol.auth.principal import presented
from registry.kinds.http_client.acting import CannotActAsUser

from . import outbound, provider_client
from .models import Provider

MARGIN = 30.0  # s: an exchanged token this close to its expiry is exchanged again
DEFAULT_SECONDS = 60.0  # how long to keep a token whose answer said no expires_in
CACHE_MAX = 1024


class _Cache:
    """(principal, provider id, subject digest) → (token, when to stop using it): bounded, in process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: dict[tuple[str, int, str], tuple[str, float]] = {}

    def __repr__(self) -> str:
        return f"<exchanged tokens: {len(self._held)}>"

    def get(self, key: tuple[str, int, str]) -> str | None:
        with self._lock:
            hit = self._held.get(key)
            if hit is None:
                return None
            if hit[1] <= time.time():
                del self._held[key]
                return None
            return hit[0]

    def put(self, key: tuple[str, int, str], token: str, expires_at: float | None) -> None:
        now = time.time()
        until = (expires_at if expires_at is not None else now + DEFAULT_SECONDS + MARGIN) - MARGIN
        if until <= now:
            return  # too short-lived to reuse
        with self._lock:
            if len(self._held) >= CACHE_MAX:
                self._held = {k: v for k, v in self._held.items() if v[1] > now}
                while len(self._held) >= CACHE_MAX:  # still full: the oldest go first
                    del self._held[next(iter(self._held))]
            self._held[key] = (token, until)

    def clear(self) -> None:
        with self._lock:
            self._held.clear()


cache = _Cache()


def _exchange(provider_id: int, subject_token: str) -> provider_client.Tokens:
    close_old_connections()
    try:
        provider = Provider.objects.get(pk=provider_id)
        # Checked at save too; again here, as MCP_OAUTH_ISSUER may have changed since.
        problem = outbound.issuer_problem(provider.token_url)
        if problem is not None:
            raise provider_client.ProviderError(f"provider {provider.slug!r}: {problem}")
        return provider_client.exchange(provider, subject_token)
    finally:
        close_old_connections()


async def token_for(principal: str | None, info: dict[str, Any]) -> str:
    """The caller's token exchanged for one of ``info``'s provider (``vault.provider_info``)."""
    subject = presented(principal)
    if subject is None:
        raise CannotActAsUser(f"{info['name']} is reached by exchanging your own sign-in token, and this "
                              "call came with none (an API key, or no sign-in): call it signed in with "
                              "this server's OAuth sign-in")
    key = (str(principal), int(info["id"]), hashlib.sha256(subject.encode()).hexdigest())
    held = cache.get(key)
    if held is not None:
        return held
    try:
        # Not thread-sensitive: the outbound POST may take seconds, and no other call should queue
        # behind it on the one shared sync thread (the token URL may even be this server's own).
        tokens = await sync_to_async(_exchange, thread_sensitive=False)(int(info["id"]), subject)
    except provider_client.ProviderError as exc:
        why = ("refused to exchange your sign-in token" if exc.refused
               else "could not be asked to exchange your sign-in token")
        raise CannotActAsUser(f"{info['name']} {why} ({exc}); sign in again, or ask this "
                              "server's operator") from None
    except Provider.DoesNotExist:
        raise CannotActAsUser(f"the provider {info['name']!r} is not configured on this server") from None
    cache.put(key, tokens.access_token, tokens.expires_at)
    return tokens.access_token
