"""The session record and its lifecycle: new → ready → closed ([L] basic/lifecycle.mdx).

A session exists only in the legacy era (2024-11-05 … 2025-11-25); 2026-07-28 requests carry their
state in per-request ``_meta`` and use a transient ``Session`` with ``stateless=True`` that is
never stored. The record is plain JSON (``to_json`` / ``from_json``) so any store can keep it, in
memory or in Redis, and any worker can serve the next request. The core mutates it (initialize,
setLevel, subscribe); the transport persists it when ``dirty`` is set.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass, field
from typing import Any, Literal

State = Literal["new", "ready", "closed"]


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
    state: State = "new"
    created_at: float = field(default_factory=time.time)
    last_seen: float = field(default_factory=time.time)
    stateless: bool = False
    dirty: bool = field(default=False, compare=False)

    @classmethod
    def create(cls, principal: str | None = None) -> Session:
        return cls(id=new_session_id(), principal=principal)

    @property
    def initialized(self) -> bool:
        return self.state == "ready"

    def mark_dirty(self) -> None:
        self.dirty = True

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "protocol_version": self.protocol_version,
            "client_info": self.client_info,
            "client_capabilities": self.client_capabilities,
            "log_level": self.log_level,
            "subscriptions": sorted(self.subscriptions),
            "principal": self.principal,
            "state": self.state,
            "created_at": self.created_at,
            "last_seen": self.last_seen,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Session:
        return cls(
            id=data["id"],
            protocol_version=data.get("protocol_version"),
            client_info=data.get("client_info") or {},
            client_capabilities=data.get("client_capabilities") or {},
            log_level=data.get("log_level"),
            subscriptions=set(data.get("subscriptions") or ()),
            principal=data.get("principal"),
            state=data.get("state", "new"),
            created_at=data.get("created_at", time.time()),
            last_seen=data.get("last_seen", time.time()),
        )
