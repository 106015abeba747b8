"""``EventStore``: per-stream bounded logs for ``Last-Event-ID`` replay, and what a stored event
is (``Event``, its id, its wire form).

Every SSE stream of a session (one per POST answered with a stream, plus the standalone GET
stream, ``STANDALONE_STREAM``) has a log; a client that lost its stream resumes it with the id
of the last event it got ([L] basic/transports.mdx "Resumability and Redelivery"). The fan-out
writes one notification into many sessions' standalone logs at once (``broadcast``), tagging
the entries so a writer that takes over a half-done fan-out can skip the sessions already
reached (``tagged``).
"""

from __future__ import annotations

import functools
import json
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from ..jsonrpc import dumps
from ..options import refuse_leftover
from ..store_errors import UnknownEvent
from .claims import ClaimStore


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


class EventStore(ABC):
    """Per-stream bounded logs for ``Last-Event-ID`` replay ([L] transports.mdx "Resumability").

    Guarantees: ``append`` assigns increasing ids within a stream and wakes ``listen``-ers in the
    same atomic step, so a listener sees every event exactly once, whether it came in the replay
    or the live tail; ``listen`` never yields another stream's events and never skips one (a
    listener too far behind gets ``StreamLagging``); a stream's log keeps at most ``max_events``
    events for ``ttl`` seconds (older ones are evicted, and resuming from an evicted id raises
    ``UnknownEvent``).
    """

    strict_options = True  # an option no class of the backend takes is refused (options.py)

    claims: ClaimStore
    """The claims of this backend (stream claims, one-time jobs), on the same connections."""

    def __init__(self, *, max_events: int = 1000, ttl: float = 3600.0, **options: Any) -> None:
        refuse_leftover(self, options)
        self.max_events = max_events
        self.ttl = ttl

    @abstractmethod
    async def append(self, session_id: str, stream_id: str, message: dict[str, Any]) -> str:
        """Store ``message`` on the stream; return its event id (``<stream>.<seq>``, greater
        than every id the stream had, even one whose log expired since)."""

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
    async def delete_session(self, session_id: str) -> None:
        """Drop every log of the session, and its stream claim (``claims``): the session ended
        (an HTTP DELETE); a ``listen`` of it afterwards starts from an empty log."""

    async def close(self) -> None:  # noqa: B027 (optional hook)
        """Release connections (called at shutdown)."""
