"""``MemorySessionStore``: the in-process session store, the single-process default and the
reference for Redis.

State lives in plain dicts guarded by a ``threading.Lock`` (never held across an ``await``), so
the store stays correct when Django runs sync code in worker threads with loops of their own.
Records are JSON copies, as Redis keeps them: a caller mutating a loaded ``Session`` changes
nothing until ``save``. Expiry uses ``time.monotonic``.

Creating a session costs the same at 0 or 10,000 live sessions: the caps read counters (the
number of records, and live sessions per principal), and expired records are found through a
heap of expected expiries rather than by scanning every record. The expiry slides on every load
and save without touching the heap (the hot path stays one dict lookup); a heap entry whose
expected time passed is checked against its record, which is either dropped (really expired) or
pushed back with its real expiry. Each record is re-pushed at most once per idle period, so the
sweep is amortized O(log n) per create.

The fan-out lists one endpoint's sessions (``endpoint_session_ids``) from a set per endpoint kept
beside the records (added on create, dropped with the record), not by reading every record.
"""

from __future__ import annotations

import heapq
import json
import threading
import time
from typing import Any

from ...session import Session
from ...store_errors import CreateError, SessionLimitReached, UpdateError
from ..sessions import SessionStore


class _Record:
    """A stored session: its record and the same as JSON text, from which each ``load`` decodes
    its own copy (one ``loads`` per request instead of a ``dumps`` and a ``loads``)."""

    __slots__ = ("data", "expires", "text")

    def __init__(self, data: dict[str, Any], expires: float) -> None:
        self.expires = expires
        self.set(data)

    def set(self, data: dict[str, Any]) -> None:
        self.text = json.dumps(data)
        self.data: dict[str, Any] = json.loads(self.text)  # a copy nobody else holds


class MemorySessionStore(SessionStore):
    def __init__(self, *, ttl: float = 1800.0, max_sessions: int | None = None,
                 max_sessions_per_principal: int | None = None, **options: Any) -> None:
        super().__init__(ttl=ttl, max_sessions=max_sessions,
                         max_sessions_per_principal=max_sessions_per_principal, **options)
        self._lock = threading.Lock()
        self._sessions: dict[str, _Record] = {}
        self._expiries: list[tuple[float, str]] = []  # heap: (expected expiry, session id)
        self._owned: dict[str | None, int] = {}  # live sessions per principal
        self._on: dict[str, set[str]] = {}  # live session ids per endpoint (the fan-out's index)

    # -- bookkeeping (under the lock) -----------------------------------------------------------
    def _drop(self, session_id: str) -> None:
        record = self._sessions.pop(session_id, None)
        if record is None:
            return
        principal = record.data["principal"]
        left = self._owned.get(principal, 0) - 1
        if left > 0:
            self._owned[principal] = left
        else:
            self._owned.pop(principal, None)
        endpoint = record.data.get("endpoint") or ""
        members = self._on.get(endpoint)
        if members is not None:
            members.discard(session_id)
            if not members:
                del self._on[endpoint]

    def _live(self, session_id: str, now: float) -> _Record | None:
        record = self._sessions.get(session_id)
        if record is not None and record.expires <= now:
            self._drop(session_id)
            return None
        return record

    def _sweep(self, now: float) -> None:
        heap = self._expiries
        while heap and heap[0][0] <= now:
            _, session_id = heapq.heappop(heap)
            record = self._sessions.get(session_id)
            if record is None:
                continue  # deleted, or already dropped on access
            if record.expires <= now:
                self._drop(session_id)
            else:  # slid by a load or save since: check again when that runs out
                heapq.heappush(heap, (record.expires, session_id))
        if len(heap) > 2 * len(self._sessions) + 1024:
            # Deleted sessions leave their entries behind: rebuild before they outweigh the rest.
            self._expiries = [(r.expires, sid) for sid, r in self._sessions.items()]
            heapq.heapify(self._expiries)

    # -- the store ------------------------------------------------------------------------------
    async def create(self, session: Session) -> None:
        now = time.monotonic()
        with self._lock:
            self._sweep(now)
            if self._live(session.id, now) is not None:
                raise CreateError(f"Session {session.id!r} already exists")
            if self.max_sessions is not None and len(self._sessions) >= self.max_sessions:
                raise SessionLimitReached("Too many live sessions", self.max_sessions)
            cap = self.max_sessions_per_principal
            if cap is not None and self._owned.get(session.principal, 0) >= cap:
                raise SessionLimitReached("Too many live sessions for this principal", cap)
            record = _Record(session.to_json(), now + self.ttl)
            self._sessions[session.id] = record
            self._owned[session.principal] = self._owned.get(session.principal, 0) + 1
            self._on.setdefault(session.endpoint, set()).add(session.id)
            heapq.heappush(self._expiries, (record.expires, session.id))
        session.stored()

    async def load(self, session_id: str) -> Session | None:
        now = time.monotonic()
        with self._lock:
            record = self._live(session_id, now)
            if record is None:
                return None
            record.expires = now + self.ttl  # sliding idle expiry
            session = Session.from_json(json.loads(record.text))
        session.last_seen = time.time()
        return session

    async def touch(self, session_id: str) -> bool:
        now = time.monotonic()
        with self._lock:
            record = self._live(session_id, now)
            if record is None:
                return False
            record.expires = now + self.ttl  # sliding idle expiry, as load()
        return True

    async def save(self, session: Session) -> None:
        changes = session.changes()
        now = time.monotonic()
        with self._lock:
            record = self._live(session.id, now)
            if record is None:
                raise UpdateError(f"Session {session.id!r} no longer exists")
            if changes:
                record.set(changes.apply(record.data))
            record.expires = now + self.ttl
        session.stored()

    async def delete(self, session_id: str) -> bool:
        now = time.monotonic()
        with self._lock:
            existed = self._live(session_id, now) is not None
            self._drop(session_id)
            return existed

    def _all(self) -> list[dict[str, Any]]:
        now = time.monotonic()
        with self._lock:
            self._sweep(now)
            return [r.data for r in self._sessions.values()]

    async def list_sessions(self, limit: int = 100, after: tuple[float, str] | None = None) -> list[Session]:
        now, wall = time.monotonic(), time.time()
        with self._lock:
            self._sweep(now)
            records = sorted(self._sessions.values(), key=lambda r: (r.data["created_at"], r.data["id"]),
                             reverse=True)
            if after is not None:
                records = [r for r in records if (r.data["created_at"], r.data["id"]) < after]
            found = [(Session.from_json(json.loads(r.text)), r.expires) for r in records[:limit]]
        for session, expires in found:
            session.last_seen = wall - (now - (expires - self.ttl))  # the last load or save
        return [session for session, _ in found]

    async def count(self, principal: str | None = None) -> int:
        now = time.monotonic()
        with self._lock:
            self._sweep(now)
            return len(self._sessions) if principal is None else self._owned.get(principal, 0)

    async def session_ids(self) -> list[str]:
        return [d["id"] for d in self._all()]

    async def endpoint_session_ids(self, endpoint: str) -> list[str]:
        now = time.monotonic()
        with self._lock:
            self._sweep(now)  # drops every expired record, and with it its index entry
            return list(self._on.get(endpoint, ()))

    async def initialized_session_ids(self) -> list[str]:
        return [d["id"] for d in self._all() if d.get("state") == "ready"]

    async def initialized_among(self, session_ids: list[str]) -> list[str]:
        now = time.monotonic()
        with self._lock:
            self._sweep(now)
            records = self._sessions
            return [sid for sid in session_ids
                    if (r := records.get(sid)) is not None and r.data.get("state") == "ready"]

    async def subscribers(self, uri: str) -> list[str]:
        return [d["id"] for d in self._all() if uri in d["subscriptions"]]
