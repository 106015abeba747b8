"""Writing one change's notifications into the standalone-stream log of every live session it
reaches, once across workers, in parts, so the first streams get theirs before the last session is
even looked at.

Owns ``ChangeWriter``. What to write, and to whom, is ``notifications.deliveries``; this module
finds the sessions (every live session; the sessions of the endpoints a change names, from each
endpoint's index, so a change reaching 50 of 10,000 sessions lists, checks and writes 50; a key's
sessions for a grant; a slice at a time, the initialized ones among them; the subscribers of each
changed URI, within the endpoints' or the key's sessions) and appends the notification to
their ``STANDALONE_STREAM`` log (a GET stream is a ``listen()`` on it, so it delivers each
notification exactly once, across reconnects and workers). Sessions in the store are of the
legacy revisions: 2026-07-28 requests are stateless and hear of changes on ``subscriptions/listen``.

The first writer to claim the change owns it (``claim.take_turn``) and marks it split; every
writer that got it then splits the sessions by a hash of their id into ``PARTS`` parts, each
claimed on its own, so the owner and every other worker write parts side by side (10,000
sessions: each of two workers lists, checks and appends about half). Exactly once, per part as per
change: a part is written only by the winner of its claim, whose lease is renewed while it writes
(``claim.LeaseKeeper``); a writer that dies mid-part lets it lapse and the next asker retakes the
part and skips the sessions whose log already holds the change's tagged entry
(``EventStore.tagged``). A change whose owner claim was retaken is checked the same way in every
part (its earlier owner may have written without parts). Order: ``write`` returns only once every
part is written (``DONE``), whoever wrote it, so change N+1 is never written before change N.
The owner of a retaken change says so (``claim.retaken_key``) before it marks the change split, so
the workers that help with its parts check theirs too.

The first slice a worker writes is small (``FIRST_SLICE``): it reaches its streams after one
short round of reads and appends, not after the whole part's.
"""

from __future__ import annotations

import asyncio
import random
import zlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..stores.claims import Claim
from ..stores.events import STANDALONE_STREAM, EventStore
from ..stores.sessions import SessionStore
from .claim import (
    DONE_TTL,
    LEASE,
    POLL_MAX,
    POLL_MIN,
    LeaseKeeper,
    LeaseLost,
    part_key,
    retaken_key,
    split_key,
    take_turn,
    was_retaken,
)
from .notifications import Change, Delivery, deliveries

if TYPE_CHECKING:
    from ..provider import ProviderCapabilities

PARTS = 8
FIRST_SLICE = 32  # sessions in the first slice a worker writes: the first streams' wait
SLICE = 500  # sessions per slice afterwards (one readiness read and one pipelined append each)
RETAKE_WINDOW = 30.0  # s: how far back a retaken part looks for what its writer wrote


def part_of(session_id: str) -> int:
    return zlib.crc32(session_id.encode()) % PARTS


@dataclass
class _Job:
    """One change as this worker writes it: what to write, to which sessions, under which leases."""

    key: str
    lists: list[Delivery]  # list_changed: to the initialized sessions among ``listed``
    updates: list[Delivery]  # resources/updated: to the subscribers of each URI
    listed: list[str]
    scope: set[str] | None  # a grant or endpoints: only these sessions, else None
    leases: LeaseKeeper  # this worker's leases on the change and its parts, renewed while it writes
    wrote: asyncio.Event  # set once this worker's first slice is written
    retaken: bool = False
    parts: list[list[str]] = field(default_factory=list)
    subscribers: dict[str, list[str]] = field(default_factory=dict)  # uri -> ids, read once
    first: bool = True  # the next slice is this worker's first of the change

    def __post_init__(self) -> None:
        self.parts = [[] for _ in range(PARTS)]
        for sid in self.listed:
            self.parts[part_of(sid)].append(sid)


class ChangeWriter:
    def __init__(self, sessions: SessionStore, events: EventStore, *, lease: float = LEASE) -> None:
        self.sessions, self.events, self.lease = sessions, events, lease
        self.claims = events.claims  # the event store's: who writes which change and part

    async def write(self, key: str, change: Change, caps: ProviderCapabilities, *,
                    wrote: asyncio.Event | None = None) -> int:
        """Write ``change`` (claim key ``key``) unless another writer did, helping with its parts;
        returns the number of notifications this worker wrote. ``wrote`` is set once this worker's
        first slice is written, or once it has nothing (more) to write."""
        wrote = wrote if wrote is not None else asyncio.Event()
        wanted = deliveries(change, caps)
        lists = [d for d in wanted if d.kind is not None]
        # Listed while the change is claimed: both are round trips on the way to the first write.
        scoped = change.principals is not None or change.endpoints is not None
        listing = asyncio.ensure_future(self._sessions_of(change)) if lists or scoped else None
        split: asyncio.Future[None] | None = None
        leases = LeaseKeeper(self.claims, self.lease)
        try:
            claim = await take_turn(self.claims, key, self.lease)
            if claim is Claim.DONE:
                return 0
            retaken = claim is Claim.RETAKEN
            if claim is not Claim.HELD:
                leases.hold(key)  # renewed while its parts are written, however long it takes
                if retaken:
                    # Said before the split: a helper that sees the split sees this too, and
                    # checks its parts for what the dead owner wrote (else it could write twice).
                    await self.claims.finish_once(retaken_key(key), DONE_TTL)
                # The owner says the change is written in parts: only then may the other
                # workers help. Said while it starts on its own parts, not before.
                split = asyncio.ensure_future(self.claims.finish_once(split_key(key), DONE_TTL))
            else:
                retaken = await was_retaken(self.claims, key)  # while the listing is under way
            listed = await listing if listing is not None else []
            job = _Job(key, lists, [d for d in wanted if d.uri is not None], listed,
                       set(listed) if scoped else None, leases, wrote, retaken=retaken)
            written = await self._write_parts(job)
            if split is not None:
                await split
            if claim is not Claim.HELD:
                await self.claims.finish_once(key, DONE_TTL)
            return written
        finally:
            wrote.set()  # nothing (more) to write first: whoever waits for it need not
            await leases.close()
            # On an error midway: a change never marked split is taken over whole when its
            # lease lapses (RETAKEN), so dropping the marker loses nothing.
            for task in (listing, split):
                if task is not None and not task.done():
                    task.cancel()
                elif task is not None and not task.cancelled():
                    task.exception()  # retrieved: the error that matters is the one raised

    async def _sessions_of(self, change: Change) -> list[str]:
        # Not load(): loading would slide every idle session's expiry. Readiness is checked a
        # slice at a time as the slices are written.
        on: list[str] | None = None
        if change.endpoints is not None:
            # Each endpoint's own index (one round trip each, sent together): the sessions of the
            # other endpoints are never read (issue 39: no extra work for unaffected streams).
            found = await asyncio.gather(*(self.sessions.endpoint_session_ids(endpoint)
                                           for endpoint in sorted(change.endpoints)))
            on = list(dict.fromkeys(sid for ids in found for sid in ids))
        if change.principals is None:
            return on if on is not None else await self.sessions.session_ids()
        listed: list[str] = []
        for principal in sorted(change.principals):
            listed += await self.sessions.principal_session_ids(principal)
        if on is None:
            return listed
        allowed = set(on)
        return [sid for sid in listed if sid in allowed]

    async def _write_parts(self, job: _Job) -> int:
        """Claim and write parts until every part of the change is written; returns how many
        notifications this worker wrote."""
        # Each worker starts at its own part, so two workers seldom ask for the same one.
        start = random.randrange(PARTS)
        pending = [(start + i) % PARTS for i in range(PARTS)]
        written, pause = 0, POLL_MIN
        while pending:
            progressed = False
            for part in list(pending):
                key = part_key(job.key, part)
                claim = await self.claims.claim_once(key, self.lease)
                if claim is Claim.HELD:
                    continue  # another worker writes it now; asked again after the others
                pending.remove(part)
                progressed = True
                if claim is Claim.DONE:
                    continue
                job.leases.hold(key)
                try:
                    written += await self._write_part(job, part, job.retaken or claim is Claim.RETAKEN)
                except LeaseLost:
                    # Stalled past its lease and retaken: the taker writes the rest (skipping what
                    # this worker wrote); waited for like a part another worker won.
                    pending.append(part)
                    continue
                finally:
                    job.leases.release(key)
                await self.claims.finish_once(key, DONE_TTL)
            if pending and not progressed:
                # Only parts other workers write are left: the next change must wait for them, or
                # the two could reach a stream in the wrong order.
                await asyncio.sleep(pause)
                pause = min(pause * 2, POLL_MAX)
            elif progressed:
                pause = POLL_MIN
        return written

    async def _write_part(self, job: _Job, part: int, retaken: bool) -> int:
        written, session_ids = 0, job.parts[part]
        if job.lists:
            pos = 0
            while pos < len(session_ids):
                size = FIRST_SLICE if job.first else SLICE
                job.first = False
                chunk = session_ids[pos:pos + size]
                pos += size
                ready = await self.sessions.initialized_among(chunk)
                for delivery in job.lists:
                    written += await self._send(job, part, ready, delivery, retaken)
                job.wrote.set()
        for delivery in job.updates:
            uri = str(delivery.uri)
            if uri not in job.subscribers:
                found = await self.sessions.subscribers(uri)
                job.subscribers[uri] = found if job.scope is None else [s for s in found if s in job.scope]
            targets = [sid for sid in job.subscribers[uri] if part_of(sid) == part]
            written += await self._send(job, part, targets, delivery, retaken)
        return written

    async def _send(self, job: _Job, part: int, session_ids: list[str], delivery: Delivery,
                    retaken: bool) -> int:
        if not session_ids:
            return 0
        job.leases.check(part_key(job.key, part))
        tag = f"{job.key}|{delivery.tag}"
        if retaken:
            # A writer died mid-part: skip the sessions it reached (their entries carry the tag).
            reached = await self.events.tagged(session_ids, STANDALONE_STREAM, tag, RETAKE_WINDOW)
            session_ids = [sid for sid in session_ids if sid not in reached]
        # One broadcast (Redis: pipelined in batches), not a round trip per session.
        return await self.events.broadcast(session_ids, STANDALONE_STREAM, delivery.message, tag=tag)
