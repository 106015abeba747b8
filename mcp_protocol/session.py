"""The session record and its lifecycle: new → ready → closed ([L] basic/lifecycle.mdx).

A session exists only in the legacy era (2024-11-05 … 2025-11-25); 2026-07-28 requests carry their
state in per-request ``_meta`` and use a transient ``Session`` with ``stateless=True`` that is
never stored. The record is plain JSON (``to_json`` / ``from_json``) so any store can keep it, in
memory or in Redis, and any worker can serve the next request. The core mutates it (initialize,
setLevel, subscribe); the transport persists it when ``dirty`` is set.

Persisting stores ``changes()`` (what this copy changed since it was loaded), not the whole
record: several requests of one session run at once, on one worker or several ([L] transports.mdx
"Multiple Connections"), each on its own copy, and two ``resources/subscribe`` calls must both
stick. The store merges the changes into the stored record atomically.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass, field
from typing import Any, Literal

State = Literal["new", "ready", "closed"]
# A session id is its client's credential: what may be shown or kept of it outside the session
# store (log lines, the audit log) is this many first characters (docs/guides/operations.md).
SHOWN_PREFIX = 8

# Set once at creation: never part of a change.
_FIXED = frozenset({"id", "created_at", "last_seen", "subscriptions", "endpoint"})


@dataclass(frozen=True, slots=True)
class SessionChanges:
    """What one copy of a session changed: whole fields (last writer wins per field) and the
    subscriptions it added or removed (merged with other copies' at the URI level)."""

    fields: dict[str, Any]
    subscribed: frozenset[str] = frozenset()
    unsubscribed: frozenset[str] = frozenset()

    def __bool__(self) -> bool:
        return bool(self.fields or self.subscribed or self.unsubscribed)

    def apply(self, data: dict[str, Any]) -> dict[str, Any]:
        """The stored record ``data`` with these changes merged in (a new dict)."""
        merged = {**data, **self.fields}
        subscriptions = (set(data.get("subscriptions") or ()) | self.subscribed) - self.unsubscribed
        merged["subscriptions"] = sorted(subscriptions)
        return merged


def new_session_id() -> str:
    """Cryptographically random, visible ASCII only (0x21-0x7E: [L] transports.mdx "Session Management")."""
    return secrets.token_urlsafe(24)


@dataclass
class Session:
    id: str
    protocol_version: str | None = None
    client_info: dict[str, Any] = field(default_factory=dict)
    client_capabilities: dict[str, Any] = field(default_factory=dict)
    # None: no logging/setLevel received yet; the core then sends every level (logging.mdx lets the
    # server choose its default).
    log_level: str | None = None
    subscriptions: set[str] = field(default_factory=set)
    principal: str | None = None
    # The endpoint that made it (``endpoints.py``: a virtual server's slug; ``CATCH_ALL`` for
    # ``/mcp`` serving everything): on any other endpoint the session is unknown (404).
    endpoint: str = ""
    state: State = "new"
    created_at: float = field(default_factory=time.time)
    last_seen: float = field(default_factory=time.time, compare=False)  # informational
    stateless: bool = False
    dirty: bool = field(default=False, compare=False)
    # The record as loaded (or last saved): ``changes()`` is the difference from it.
    _base: dict[str, Any] | None = field(default=None, compare=False, repr=False)

    @classmethod
    def create(cls, principal: str | None = None, endpoint: str = "") -> Session:
        return cls(id=new_session_id(), principal=principal, endpoint=endpoint)

    @property
    def initialized(self) -> bool:
        return self.state == "ready"

    def mark_dirty(self) -> None:
        self.dirty = True

    def changes(self) -> SessionChanges:
        """What this copy changed since it was loaded or saved (everything, if never stored)."""
        data = self.to_json()
        base = self._base or {}
        before = set(base.get("subscriptions") or ())
        return SessionChanges(
            fields={k: v for k, v in data.items() if k not in _FIXED and (k not in base or base[k] != v)},
            subscribed=frozenset(self.subscriptions - before),
            unsubscribed=frozenset(before - self.subscriptions),
        )

    def stored(self) -> None:
        """The store now holds this copy's changes: later ``changes()`` start from here."""
        self._base = self.to_json()
        self.dirty = False

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "protocol_version": self.protocol_version,
            "client_info": self.client_info,
            "client_capabilities": self.client_capabilities,
            "log_level": self.log_level,
            "subscriptions": sorted(self.subscriptions),
            "principal": self.principal,
            "endpoint": self.endpoint,
            "state": self.state,
            "created_at": self.created_at,
            "last_seen": self.last_seen,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Session:
        session = cls(
            id=data["id"],
            protocol_version=data.get("protocol_version"),
            client_info=data.get("client_info") or {},
            client_capabilities=data.get("client_capabilities") or {},
            log_level=data.get("log_level"),
            subscriptions=set(data.get("subscriptions") or ()),
            principal=data.get("principal"),
            endpoint=data.get("endpoint") or "",
            state=data.get("state", "new"),
            created_at=data.get("created_at", time.time()),
            last_seen=data.get("last_seen", time.time()),
        )
        session._base = data  # the caller's freshly decoded dict, not shared
        return session
