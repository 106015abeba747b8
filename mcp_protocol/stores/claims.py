"""``ClaimStore``: which worker holds what, with a lease that lapses if its holder dies.

Two kinds of claim, both an owner and a time to live the holder keeps extending, so a dead
worker's claim lapses by itself and nothing needs to clean up after it:

- a session's standalone GET stream: at most one per session across the cluster
  ([L] basic/transports.mdx: the server may keep one standalone SSE stream per session; the
  SDK answers a second GET with 409), taken by the worker serving the stream and refreshed on
  every keep-alive. The same lease holds an upstream MCP server's listen stream on one worker
  of the fleet, under the id ``upstream-listen:<id>`` (``registry/upstreams/keeper.py``);
- a one-time job (the fan-out of one bus ``changes`` message, or one part of it; the
  notifications of a key's scope change; the answer for a dead worker's requests): done by
  exactly one worker, retaken by another if the first one's lease lapses midway.

A backend's claim store is its event store's ``claims`` (``EventStore.claims``): the same
connections and key prefix, no setting of its own.
"""

from __future__ import annotations

import enum
from abc import ABC, abstractmethod


class Claim(enum.Enum):
    """What ``ClaimStore.claim_once`` answers."""

    WON = "won"  # the caller does the job, then calls finish_once
    RETAKEN = "retaken"  # won after an earlier winner's lease lapsed: part of the job may be done
    HELD = "held"  # another caller's lease on the job is running
    DONE = "done"  # the job was finished


class ClaimStore(ABC):
    """Claims shared by every worker of the backend: what one worker takes, the others see at once.

    Guarantees: taking a claim is atomic (of concurrent takers on any workers, exactly one
    wins); only the owner extends or releases it; a claim not extended lapses after its ttl
    (or lease), and then anyone may take it; every answer is about the claim as it is now, on
    every worker (no worker-local cache).
    """

    # -- the standalone GET stream of a session ------------------------------------------------
    @abstractmethod
    async def claim_stream(self, session_id: str, owner: str, ttl: float, *, take_over: bool = False) -> bool:
        """Claim the session's standalone stream for ``owner`` for ``ttl`` seconds; False if a
        live claim of any owner (``owner`` included) holds it. ``take_over``: claim it whoever
        holds it (a resume: the client lost the old stream, even if its worker did not notice
        yet); the old owner's next ``refresh_stream`` then fails."""

    @abstractmethod
    async def refresh_stream(self, session_id: str, owner: str, ttl: float) -> bool:
        """Extend ``owner``'s claim to ``ttl`` seconds from now; False (and nothing changed) if
        the claim lapsed, was released or is another owner's (taken over): the stream must end."""

    @abstractmethod
    async def release_stream(self, session_id: str, owner: str) -> None:
        """Drop the claim if ``owner`` holds it; a claim of another owner is left as it is."""

    @abstractmethod
    async def open_streams(self, session_ids: list[str]) -> set[str]:
        """Which of ``session_ids`` have a live stream claim (their standalone GET stream is open
        on some worker), for the session browsers; one round trip for the lot."""

    # -- one-time jobs ------------------------------------------------------------------------------
    @abstractmethod
    async def claim_once(self, key: str, lease: float) -> Claim:
        """Take the one-time job ``key`` for ``lease`` seconds: ``WON`` for exactly one caller
        across the cluster, ``HELD`` while that caller's lease runs, ``DONE`` once it called
        ``finish_once``. A winner that never finishes (its worker died) lets the lease lapse,
        and the next caller wins instead, with ``RETAKEN``: the job may be partly done, so it
        must skip what is (``EventStore.tagged``)."""

    @abstractmethod
    async def renew_once(self, keys: list[str], lease: float) -> set[str]:
        """Extend to ``lease`` seconds from now the leases on the jobs ``keys`` that this store
        (this worker) won and holds: a winner slower than its lease keeps its job instead of
        having it retaken midway (and partly written twice). Returns the keys renewed; a job
        finished, lapsed or won by another worker since is left as it is (not among them), and
        a key never claimed is not created."""

    @abstractmethod
    async def finish_once(self, key: str, ttl: float) -> None:
        """Mark the job ``key`` done: ``claim_once`` answers ``DONE`` for ``ttl`` seconds, on
        every worker."""
