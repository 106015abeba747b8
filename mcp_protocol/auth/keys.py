"""API keys on the hot path: the token format, its digest, and the per-worker ``KeyRing``.

A key is ``mcp_<prefix>_<secret>``: the prefix (8 characters) is public, shown in the admin and the
audit log so people can tell keys apart; the secret is 256 bits from ``secrets``. The database
keeps only SHA-256 of the whole token: a fast hash is right for a random secret of that size
(nothing to brute-force), and a slow password hasher would cost milliseconds per request.

``KeyRing`` holds every usable key of the database in memory, by digest, so resolving a key is a
hash and a dict lookup with no query (then one lookup by the token itself, until the next
reload). It is loaded from a ``KeySource`` (the ``access`` app reads the database, in a thread) at
start, again whenever a key changes (a message on the bus channel
``access``, published by the app after each commit: every worker reloads within milliseconds, so a
revoked key stops working everywhere well within a second), after a bus outage (``RESYNC``), and
whenever ``KeySource.version()`` (one tiny aggregate query, every ``POLL_EVERY`` seconds) says the
table changed: that covers a lost bus message and a single process on the in-memory bus whose keys
are changed from another process (``manage.py mcp_keys``). Expiry is checked per request against
the clock, with no reload needed. A key that stops working (revoked, deleted, or expired: the poll
looks every ``POLL_EVERY`` seconds) is reported once to ``on_revoke``, so its open streams and its
sessions end on every worker (``Runtime.principals_revoked``) instead of living on. "Last used"
is kept in memory and written back in batches every ``TOUCH_EVERY`` seconds, off the hot path.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import secrets
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ..bus.base import RESYNC, Bus, Subscription
from .principal import Grant, Principal, Rate

logger = logging.getLogger("mcp_protocol.auth")

ACCESS_CHANNEL = "access"  # {"id": ..., "keys": [ids]}: a key was created, changed or revoked
TOKEN_PREFIX = "mcp_"
PREFIX_LENGTH = 8
POLL_EVERY = 1.0
TOUCH_EVERY = 5.0
MAX_TOKENS = 4096  # tokens remembered per reload (``KeyRing._tokens``); forgotten when full


def new_token() -> tuple[str, str]:
    """A fresh key: (token shown once, its public prefix)."""
    prefix = secrets.token_hex(PREFIX_LENGTH // 2)
    return f"{TOKEN_PREFIX}{prefix}_{secrets.token_urlsafe(32)}", prefix


def digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogateescape")).hexdigest()


def looks_like_key(token: str) -> bool:
    return token.startswith(TOKEN_PREFIX) and token.count("_") >= 2


@dataclass(frozen=True, slots=True)
class KeyRecord:
    id: int
    prefix: str
    digest: str
    grant: Grant
    expires_at: float | None = None  # epoch seconds
    rate: Rate | None = None
    tool_rate: Rate | None = None

    def principal(self) -> Principal:
        # The key's id, not its prefix: a prefix is public and need not be unique forever.
        return Principal(f"key:{self.id}", self.grant, f"key {self.prefix}", self.rate, self.tool_rate,
                         self.expires_at)


class KeySource(ABC):
    """Where keys live (the ``access`` app: the database). Called off the hot path only."""

    @abstractmethod
    async def load(self) -> list[KeyRecord]:
        """Every key that is not revoked (expired ones may be included: the ring checks expiry)."""

    @abstractmethod
    async def touch(self, last_used: dict[int, float]) -> None:
        """Record when each key was last used (epoch seconds)."""

    async def version(self) -> str:
        """Changes whenever a key is created, changed or revoked (not when it is used); ``""``:
        cannot tell, rely on the bus alone."""
        return ""


class KeyRing:
    def __init__(self, source: KeySource, bus: Bus, *,
                 on_change: Callable[[str, set[str]], object] | None = None,
                 on_revoke: Callable[[set[str]], object] | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        self.source, self.bus, self.clock = source, bus, clock
        self.on_change = on_change  # (change id, principal ids whose grant changed)
        # (principal ids whose key stopped working: revoked, deleted or expired since last told)
        self.on_revoke = on_revoke
        self._expired: set[str] = set()  # expired keys already reported to on_revoke
        self._by_principal: dict[str, KeyRecord] = {}
        self._keys: dict[str, tuple[KeyRecord, Principal]] = {}
        # Token → its entry of ``_keys``, for the tokens seen since the last reload: a request of
        # a known key costs a dict lookup instead of SHA-256 and its hex digest. Replaced with
        # ``_keys`` (no await between), so a key a reload removed is never found here; expiry is
        # still checked per request. Unknown tokens are not kept (no growth from bad tokens).
        self._tokens: dict[str, tuple[KeyRecord, Principal]] = {}
        self._used: dict[int, float] = {}
        self._subscription: Subscription | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._reload_lock = asyncio.Lock()
        self._version = ""

    # -- the hot path -------------------------------------------------------------------------
    def resolve(self, token: str) -> Principal | None:
        """The key's principal, or ``None`` (unknown, revoked or expired: indistinguishable)."""
        entry = self._tokens.get(token)
        if entry is None:
            entry = self._keys.get(digest(token))
            if entry is None:
                return None
            if len(self._tokens) >= MAX_TOKENS:
                self._tokens = {}
            self._tokens[token] = entry
        record, principal = entry
        now = self.clock()
        if record.expires_at is not None and now >= record.expires_at:
            return None
        self._used[record.id] = now
        return principal

    # -- life cycle ---------------------------------------------------------------------------
    async def start(self) -> None:
        if self._tasks:
            return  # started already (a runtime start that failed later is retried)
        self._subscription = await self.bus.subscribe(ACCESS_CHANNEL)  # before the load: no gap
        await self.reload()
        self._tasks = [asyncio.create_task(self._listen(self._subscription)),
                       asyncio.create_task(self._every(POLL_EVERY, self._poll)),
                       asyncio.create_task(self._every(TOUCH_EVERY, self.flush_used))]

    async def close(self) -> None:
        if self._subscription is not None:
            with contextlib.suppress(Exception):
                await self._subscription.close()
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks = []
        with contextlib.suppress(Exception):
            await self.flush_used()

    async def reload(self) -> set[str]:
        """Load every key; returns the principal ids whose grant changed (or that appeared/left)."""
        async with self._reload_lock:
            self._version = await self.source.version()  # before the load: a later change is seen
            records = await self.source.load()
            before = {str(p.id): p.grant for _, p in self._keys.values()}
            self._keys, self._tokens = {r.digest: (r, r.principal()) for r in records}, {}
            self._by_principal = {str(p.id): r for r, p in self._keys.values()}
            after = {str(p.id): p.grant for _, p in self._keys.values()}
        await self._report_revoked(before.keys() - after.keys())
        return {pid for pid in before.keys() | after.keys() if before.get(pid) != after.get(pid)}

    def prefix(self, principal: Principal) -> str | None:
        """The public prefix of the key ``principal`` was resolved from (a virtual server's list
        of keys names prefixes: ``endpoint_access.key_allowed``), or None when it is no key."""
        record = self._by_principal.get(str(principal.id))
        return None if record is None else record.prefix

    @property
    def started(self) -> bool:
        return bool(self._tasks)

    def alive(self, principal: Principal) -> bool:
        """Does the key ``principal`` was resolved from still work (not revoked, not expired)?"""
        record = self._by_principal.get(str(principal.id))
        return record is not None and (record.expires_at is None or self.clock() < record.expires_at)

    async def _report_revoked(self, gone: Iterable[str]) -> None:
        """Tell ``on_revoke`` of keys that left the ring or expired, once each (expiry is only
        read per request otherwise: the open streams and sessions of an expired key must end)."""
        now = self.clock()
        expired = {str(p.id) for r, p in self._keys.values()
                   if r.expires_at is not None and now >= r.expires_at}
        revoked = (set(gone) | expired) - self._expired
        self._expired = expired
        if revoked and self.on_revoke is not None:
            try:
                await _maybe_await(self.on_revoke(revoked))
            except Exception:  # the stores are down, say: streams still end at their keep-alive
                logger.exception("could not end the streams and sessions of %d revoked keys", len(revoked))

    async def flush_used(self) -> None:
        used, self._used = self._used, {}
        if used:
            try:
                await self.source.touch(used)
            except Exception:
                logger.exception("could not record when %d API keys were last used", len(used))

    def records(self) -> Iterable[KeyRecord]:
        return (r for r, _ in self._keys.values())

    # -- background -----------------------------------------------------------------------------
    async def _listen(self, subscription: Subscription) -> None:
        async for message in subscription:
            try:
                changed = await self.reload()
                if changed and message != RESYNC and self.on_change is not None:
                    await _maybe_await(self.on_change(str(message.get("id", "")), changed))
            except Exception:
                logger.exception("could not reload API keys after a change")

    async def _poll(self) -> None:
        try:
            await self._report_revoked(())
            if await self.source.version() != self._version:
                changed = await self.reload()
                if changed and self.on_change is not None:
                    await _maybe_await(self.on_change(f"poll:{self._version}", changed))
        except Exception:
            logger.exception("could not reload API keys")

    async def _every(self, seconds: float, job: Callable[[], object]) -> None:
        while True:
            await asyncio.sleep(seconds)
            await _maybe_await(job())


async def _maybe_await(value: object) -> None:
    if asyncio.iscoroutine(value):
        await value
