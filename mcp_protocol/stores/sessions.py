"""``SessionStore``: the session records every worker reads to serve any request of any
session ([L] basic/transports.mdx "Session Management"), with a sliding idle expiry, the caps on
live sessions, and the listings the fan-out and the session browsers read.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from ..options import refuse_leftover
from ..session import Session


class SessionStore(ABC):
    """Keeps ``Session`` records with a sliding idle expiry of ``ttl`` seconds.

    Guarantees: ``create`` is atomic (two creates of one id: one raises ``CreateError``) and
    enforces the caps atomically; ``load`` of an unknown or expired id returns ``None`` and slides
    the expiry of a live one (its ``last_seen`` is now); ``save`` merges the copy's
    ``Session.changes()`` into the stored record atomically, so concurrent saves of different
    changes (two requests subscribing at once, on any workers) all persist, and never resurrects
    a deleted session (``UpdateError``); after ``delete`` every worker's ``load`` returns ``None``.
    ``list_sessions`` reports each session's ``last_seen`` (its latest load or save).
    """

    strict_options = True  # an option no class of the backend takes is refused (options.py)

    def __init__(self, *, ttl: float = 1800.0, max_sessions: int | None = None,
                 max_sessions_per_principal: int | None = None, **options: Any) -> None:
        refuse_leftover(self, options)
        self.ttl = ttl
        self.max_sessions = max_sessions
        self.max_sessions_per_principal = max_sessions_per_principal

    @abstractmethod
    async def create(self, session: Session) -> None:
        """Store a new session. Atomic: of two creates of one id, one raises ``CreateError``;
        past ``max_sessions`` live sessions, or ``max_sessions_per_principal`` of its
        principal, it raises ``SessionLimitReached`` (the caps checked and the session counted
        in one step, so concurrent creates on any workers never overshoot)."""

    @abstractmethod
    async def load(self, session_id: str) -> Session | None:
        """The session, or None if unknown or expired; slides its idle expiry (its
        ``last_seen`` is now). The copy is the caller's: changing it changes nothing stored
        until ``save``."""

    async def touch(self, session_id: str) -> bool:
        """Slide the session's idle expiry as ``load`` does, without reading the record; True
        if it is live (an open stream's heartbeat: 10,000 streams, each every keep-alive)."""
        return await self.load(session_id) is not None

    @abstractmethod
    async def save(self, session: Session) -> None:
        """Merge the copy's ``Session.changes()`` into the stored record atomically (two saves
        of different changes, on any workers, both persist) and slide the expiry; never
        resurrects a deleted or expired session (``UpdateError``)."""

    @abstractmethod
    async def delete(self, session_id: str) -> bool:
        """End a session; True if it existed. From now on every worker's ``load`` returns None
        and the session leaves every listing and ``subscribers``."""

    @abstractmethod
    async def list_sessions(self, limit: int = 100, after: tuple[float, str] | None = None) -> list[Session]:
        """Live sessions, newest first: ordered by ``(created_at, id)`` descending (the admin's
        and the management API's browsers). ``after``: the ``(created_at, id)`` of the last
        session of the previous page; the page starts right after that position, whether or not
        that session still exists, so paging never skips nor repeats a session."""

    @abstractmethod
    async def count(self, principal: str | None = None) -> int:
        """How many sessions are live (of ``principal`` if given): what the caps compare."""

    @abstractmethod
    async def session_ids(self) -> list[str]:
        """Every live session id (fan-out of list_changed to standalone streams)."""

    @abstractmethod
    async def endpoint_session_ids(self, endpoint: str) -> list[str]:
        """Ids of the live sessions created on ``endpoint`` (``Session.endpoint``: a virtual
        server's slug, ``CATCH_ALL`` for ``/mcp``), in no particular order, without sliding their
        expiry: the fan-out of a change that names the endpoints it reaches
        (``endpoints.MESSAGE_KEY``). An index kept with the same expiry as ``session_ids``' (an
        expired or deleted session leaves it), so it costs in proportion to that endpoint's
        sessions, not to every session."""

    async def initialized_session_ids(self) -> list[str]:
        """Ids of live sessions past ``notifications/initialized`` (fan-out of list_changed),
        without sliding their expiry. Backends may do it without building ``Session`` objects."""
        return [s.id for s in await self.list_sessions(limit=2**31) if s.initialized]

    async def initialized_among(self, session_ids: list[str]) -> list[str]:
        """Those of ``session_ids`` that are live and past ``notifications/initialized``, in the
        order given, without sliding their expiry (the fan-out checks the sessions of a list it
        took once, a slice at a time, so its first writes need not wait for every session)."""
        ready = set(await self.initialized_session_ids())
        return [sid for sid in session_ids if sid in ready]

    async def principal_session_ids(self, principal: str) -> list[str]:
        """Ids of the initialized live sessions of ``principal`` (a key's scope changed: its
        sessions get list_changed). Rare, so the generic listing is good enough."""
        return [s.id for s in await self.list_sessions(limit=2**31)
                if s.principal == principal and s.initialized]

    @abstractmethod
    async def subscribers(self, uri: str) -> list[str]:
        """Ids of live sessions subscribed to ``uri`` (resources/subscribe)."""

    async def close(self) -> None:  # noqa: B027 (optional hook)
        """Release connections (called at shutdown)."""
