"""``MemoryClaimStore``: the in-process claim store (``MemoryEventStore.claims``).

One process, one store: every "worker" of a test is this process, so the claims are plain dicts
under a ``threading.Lock`` (never held across an ``await``), and whoever holds a lease here is
this worker. Expiry uses ``time.monotonic``, checked on access.
"""

from __future__ import annotations

import threading
import time

from ..claims import Claim, ClaimStore


class MemoryClaimStore(ClaimStore):
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._streams: dict[str, tuple[str, float]] = {}  # session id -> (owner, monotonic expiry)
        self._once: dict[str, tuple[Claim, float]] = {}  # job key -> (HELD or DONE, monotonic expiry)
        self._tried: dict[str, float] = {}  # jobs won and not finished yet (a lapse means RETAKEN)

    # -- the standalone GET stream of a session ------------------------------------------------
    async def claim_stream(self, session_id: str, owner: str, ttl: float, *, take_over: bool = False) -> bool:
        now = time.monotonic()
        with self._lock:
            held = self._streams.get(session_id)
            if held is not None and held[1] > now and not take_over:
                return False
            self._streams[session_id] = (owner, now + ttl)
            return True

    async def refresh_stream(self, session_id: str, owner: str, ttl: float) -> bool:
        now = time.monotonic()
        with self._lock:
            held = self._streams.get(session_id)
            if held is None or held[0] != owner or held[1] <= now:
                return False
            self._streams[session_id] = (owner, now + ttl)
            return True

    async def release_stream(self, session_id: str, owner: str) -> None:
        with self._lock:
            held = self._streams.get(session_id)
            if held is not None and held[0] == owner:
                del self._streams[session_id]

    async def open_streams(self, session_ids: list[str]) -> set[str]:
        now = time.monotonic()
        with self._lock:
            held = {sid: self._streams.get(sid) for sid in session_ids}
            return {sid for sid, claim in held.items() if claim is not None and claim[1] > now}

    def drop_stream(self, session_id: str) -> None:
        """Drop the session's stream claim, whoever holds it (``MemoryEventStore.delete_session``)."""
        with self._lock:
            self._streams.pop(session_id, None)

    # -- one-time jobs ------------------------------------------------------------------------------
    async def claim_once(self, key: str, lease: float) -> Claim:
        now = time.monotonic()
        with self._lock:
            for stale in [k for k, (_, exp) in self._once.items() if exp <= now]:
                del self._once[stale]
            held = self._once.get(key)
            if held is not None:
                return held[0]
            self._once[key] = (Claim.HELD, now + lease)
            retaken = key in self._tried
            self._tried[key] = now
            return Claim.RETAKEN if retaken else Claim.WON

    async def renew_once(self, keys: list[str], lease: float) -> set[str]:
        # One process, one store: whoever holds a lease here is this worker.
        now = time.monotonic()
        renewed = set()
        with self._lock:
            for key in keys:
                held = self._once.get(key)
                if held is not None and held[0] is Claim.HELD and held[1] > now:
                    self._once[key] = (Claim.HELD, now + lease)
                    renewed.add(key)
        return renewed

    async def finish_once(self, key: str, ttl: float) -> None:
        with self._lock:
            self._once[key] = (Claim.DONE, time.monotonic() + ttl)
            self._tried.pop(key, None)  # DONE answers from now on; the marker is not needed
