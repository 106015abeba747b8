"""Session and event stores: the state a worker needs to serve any request of any session.

Backends live beside this module (``memory.py``, ``redis.py``) and are chosen by settings
(``MCP["SESSION_STORE"]`` / ``MCP["EVENT_STORE"]``: ``{"BACKEND": dotted path, "OPTIONS": {...}}``).
Every backend passes the one contract suite in ``tests/contract/``.

Exception tree::

    StoreError                 base of everything a store raises on purpose
    ├── CreateError            create() of an id that already exists
    ├── UpdateError            save() of a session that vanished (expired or deleted)
    ├── SessionLimitReached    create() past a cap on live sessions (overall or per principal)
    ├── UnknownEvent           a Last-Event-ID that is malformed, of another session, or evicted
    ├── StreamLagging          a listener fell so far behind that events would be skipped
    └── StoreUnavailable       the backend cannot be reached (Redis down): a 503, nothing kept aside
"""

from __future__ import annotations

import enum
import functools
import json
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from ..jsonrpc import dumps
from ..session import Session
from .errors import (  # re-exported until the contracts move
    CreateError as CreateError,
)
from .errors import (
    SessionLimitReached as SessionLimitReached,
)
from .errors import (
    StoreError as StoreError,
)
from .errors import (
    StoreUnavailable as StoreUnavailable,
)
from .errors import (
    StreamLagging as StreamLagging,
)
from .errors import (
    UnknownEvent as UnknownEvent,
)
from .errors import (
    UpdateError as UpdateError,
)


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

    def __init__(self, *, ttl: float = 1800.0, max_sessions: int | None = None,
                 max_sessions_per_principal: int | None = None, **options: Any) -> None:
        self.ttl = ttl
        self.max_sessions = max_sessions
        self.max_sessions_per_principal = max_sessions_per_principal

    @abstractmethod
    async def create(self, session: Session) -> None: ...

    @abstractmethod
    async def load(self, session_id: str) -> Session | None: ...

    async def touch(self, session_id: str) -> bool:
        """Slide the session's idle expiry as ``load`` does, without reading the record; True
        if it is live (an open stream's heartbeat: 10,000 streams, each every keep-alive)."""
        return await self.load(session_id) is not None

    @abstractmethod
    async def save(self, session: Session) -> None: ...

    @abstractmethod
    async def delete(self, session_id: str) -> bool:
        """End a session; True if it existed."""

    @abstractmethod
    async def list_sessions(self, limit: int = 100, after: tuple[float, str] | None = None) -> list[Session]:
        """Live sessions, newest first: ordered by ``(created_at, id)`` descending (the admin's
        and the management API's browsers). ``after``: the ``(created_at, id)`` of the last
        session of the previous page; the page starts right after that position, whether or not
        that session still exists, so paging never skips nor repeats a session."""

    @abstractmethod
    async def count(self, principal: str | None = None) -> int: ...

    @abstractmethod
    async def session_ids(self) -> list[str]:
        """Every live session id (fan-out of list_changed to standalone streams)."""

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

    # One standalone GET stream per session across the cluster ([L] transports: the SDK answers a
    # second GET with 409). A claim has an owner and a TTL the holder keeps refreshing, so a dead
    # worker's claim lapses by itself.
    @abstractmethod
    async def claim_stream(self, session_id: str, owner: str, ttl: float, *, take_over: bool = False) -> bool:
        """Claim the session's standalone stream for ``owner``; False if another owner holds it.
        ``take_over``: claim it whoever holds it (a resume: the client lost the old stream, even
        if its worker did not notice yet); the old owner's next ``refresh_claim`` fails."""

    @abstractmethod
    async def refresh_claim(self, session_id: str, owner: str, ttl: float) -> bool: ...

    @abstractmethod
    async def open_streams(self, session_ids: list[str]) -> set[str]:
        """Which of ``session_ids`` have their standalone GET stream open on some worker (a live
        claim), for the session browsers; one round trip for the lot."""

    @abstractmethod
    async def release_stream(self, session_id: str, owner: str) -> None: ...

    async def close(self) -> None:  # noqa: B027 (optional hook)
        """Release connections (called at shutdown)."""


@dataclass(frozen=True, slots=True)
class Event:
    id: str
    message: dict[str, Any]
    # The message's wire form (``stored_event``), when the store has it at hand: what a stream
    # writes, so a message read by many streams is not serialized once each.
    data: bytes | None = None


STANDALONE_STREAM = "_GET"
SHARED_WIRE_MAX = 1024  # bytes: stored messages this small have their wire form cached


@functools.lru_cache(maxsize=256)
def _decoded(payload: str) -> tuple[dict[str, Any], bytes]:
    message: dict[str, Any] = json.loads(payload)
    return message, dumps(message)


def stored_event(event_id: str, payload: str) -> Event:
    """The ``Event`` of a payload as a store keeps it (JSON text): its message and its wire form
    (``jsonrpc.dumps``), from one parse. A small one (a fan-out's note, alike in every session's
    log) is parsed and serialized once per worker, not once per stream that reads it; each reader
    gets its own top-level dict (nested values are shared: readers do not modify them). Large ones
    (a tool's result) are not kept."""
    if len(payload) <= SHARED_WIRE_MAX:
        message, wire = _decoded(payload)
        return Event(event_id, dict(message), wire)
    message = json.loads(payload)
    return Event(event_id, message, dumps(message))


def make_event_id(stream_id: str, seq: int) -> str:
    """Event ids are ``<stream>.<seq>``: unique within the session and naming their stream
    ([11] transports.mdx "Resumability": IDs SHOULD encode the originating stream)."""
    return f"{stream_id}.{seq}"


def parse_event_id(event_id: str) -> tuple[str, int]:
    stream_id, sep, seq = event_id.rpartition(".")
    # ASCII digits only: str.isdigit() also accepts "²" (int() then fails) and Arabic-Indic digits (another
    # spelling of an id we issued); a Last-Event-ID header may carry either.
    if not sep or not stream_id or not (seq.isascii() and seq.isdigit()):
        raise UnknownEvent(f"Malformed Last-Event-ID: {event_id!r}")
    return stream_id, int(seq)


class Claim(enum.Enum):
    """What ``EventStore.claim_once`` answers."""

    WON = "won"  # the caller does the job, then calls finish_once
    RETAKEN = "retaken"  # won after an earlier winner's lease lapsed: part of the job may be done
    HELD = "held"  # another caller's lease on the job is running
    DONE = "done"  # the job was finished


class EventStore(ABC):
    """Per-stream bounded logs for ``Last-Event-ID`` replay ([L] transports.mdx "Resumability").

    Guarantees: ``append`` assigns increasing ids within a stream and wakes ``listen``-ers in the
    same atomic step, so a listener sees every event exactly once, whether it came in the replay
    or the live tail; ``listen`` never yields another stream's events and never skips one (a
    listener too far behind gets ``StreamLagging``); a stream's log keeps at most ``max_events``
    events for ``ttl`` seconds (older ones are evicted, and resuming from an evicted id raises
    ``UnknownEvent``).
    """

    def __init__(self, *, max_events: int = 1000, ttl: float = 3600.0, **options: Any) -> None:
        self.max_events = max_events
        self.ttl = ttl

    @abstractmethod
    async def append(self, session_id: str, stream_id: str, message: dict[str, Any]) -> str:
        """Store ``message`` on the stream; return its event id."""

    async def append_many(self, session_id: str, stream_id: str, messages: list[dict[str, Any]]) -> list[str]:
        """Store several messages on one stream, in order (a backend may do it in one step)."""
        return [await self.append(session_id, stream_id, m) for m in messages]

    async def append_encoded(self, session_id: str, stream_id: str, payloads: list[bytes], *,
                             final: bool = False) -> list[str]:
        """``append_many`` of messages already encoded (UTF-8 JSON, as ``jsonrpc.dumps`` writes
        them): a stream that writes a response's wire form stores those bytes as they are, not a
        second serialization of the message (issue 16: one serialization of each response).
        The default decodes them for ``append_many``; backends store them as given.

        ``final``: the stream is complete, nothing more is expected on it (a POST stream's last
        step). A backend may then keep its log in a compact form; it still replays it for the
        full ``ttl`` and still accepts an append after it."""
        return await self.append_many(session_id, stream_id, [json.loads(p) for p in payloads])

    @abstractmethod
    async def broadcast(self, session_ids: list[str], stream_id: str, message: dict[str, Any],
                        *, tag: str | None = None) -> int:
        """Append ``message`` to the stream ``stream_id`` of each session (fan-out); returns how
        many were written. Backends batch it (Redis: pipelined). ``tag`` marks the entries so
        ``tagged`` can find them (never sent to a client)."""

    @abstractmethod
    async def tagged(self, session_ids: list[str], stream_id: str, tag: str, within: float) -> set[str]:
        """The sessions among ``session_ids`` whose stream got an entry tagged ``tag`` in the last
        ``within`` seconds: who a broadcast that was cut short already reached."""

    @abstractmethod
    def listen(self, session_id: str, stream_id: str, after: str | None = None) -> AsyncIterator[Event]:
        """Events of the stream after event id ``after`` (all retained ones if None, none before
        ``after`` if given), then live ones as they are appended, until the caller stops.
        Raises ``UnknownEvent`` if ``after`` is not retained."""

    @abstractmethod
    async def delete_session(self, session_id: str) -> None: ...

    @abstractmethod
    async def claim_once(self, key: str, lease: float) -> Claim:
        """Take the one-time job ``key`` (the fan-out of one bus ``changes`` message) for
        ``lease`` seconds: ``WON`` for exactly one caller across the cluster, ``HELD`` while
        that caller's lease runs, ``DONE`` once it called ``finish_once``. A winner that never
        finishes (its worker died) lets the lease lapse, and the next caller wins instead, with
        ``RETAKEN``: the job may be partly done, so it must skip what is (``tagged``).
        """

    @abstractmethod
    async def finish_once(self, key: str, ttl: float) -> None:
        """Mark the job ``key`` done: ``claim_once`` answers ``DONE`` for ``ttl`` seconds."""

    @abstractmethod
    async def renew_once(self, keys: list[str], lease: float) -> set[str]:
        """Extend to ``lease`` seconds from now the leases on the jobs ``keys`` that this store
        (this worker) won and holds: a winner slower than its lease keeps its job instead of
        having it retaken midway (and partly written twice). Returns the keys renewed; a job
        finished, lapsed or won by another worker since is left as it is (not among them)."""

    async def close(self) -> None:  # noqa: B027 (optional hook)
        """Release connections (called at shutdown)."""
