"""Writing one change's notifications in parts, so every worker writes a share and the first
streams get theirs before the last session is even looked at.

Owns ``Job`` (one change being written) and ``write_parts``. ``fanout.Fanout`` decides whether a
change is to be written at all (``claim_once(<key>)``); this module splits the sessions of the
change by a hash of their id into ``PARTS`` parts, each claimed on its own
(``claim_once(<key>#<part>)``), so the owner of the change and every other worker that got it
from the bus write parts side by side (10,000 sessions: each worker lists, checks and appends
about half instead of one worker all of them while the others wait).

Exactly once, per part as per change: a part is written only by the winner of its claim, whose
lease is renewed while it writes (``fanout_lease.py``); a writer that dies mid-part lets it lapse
and the next asker retakes the part and skips the sessions whose log already holds the change's
tagged entry (``EventStore.tagged``). A change whose owner claim was retaken is checked the same
way in every part (its earlier owner may have written without parts). Order: a worker returns only
once every part is written (``DONE``), whoever wrote it, so change N+1 is never written to a
session before change N.

The first slice a worker writes is small (``FIRST_SLICE``): it reaches its streams after one
short round of reads and appends, not after the whole part's.
"""

from __future__ import annotations

import asyncio
import random
import zlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .fanout_lease import LeaseLost, Leases
from .jsonrpc import notification
from .stores.claims import Claim
from .stores.events import STANDALONE_STREAM

if TYPE_CHECKING:
    from .fanout import Fanout

KINDS = ("tools", "resources", "prompts")
PARTS = 8
FIRST_SLICE = 32  # sessions in the first slice a worker writes: the first streams' wait
SLICE = 500  # sessions per slice afterwards (one readiness read and one pipelined append each)
DONE_TTL = 3600.0  # s: how long a written part stays known as written
POLL_MIN, POLL_MAX = 0.002, 0.05  # s: pauses between two asks while other workers write parts
RETAKE_WINDOW = 30.0  # s: how far back a retaken part looks for what its writer wrote


def part_of(session_id: str) -> int:
    return zlib.crc32(session_id.encode()) % PARTS


@dataclass
class Job:
    """One change as this worker writes it: its claim key, what changed, the sessions listed."""

    key: str
    kind: Any
    uris: list[Any]
    listed: list[str]
    leases: Leases  # this worker's leases on the change and its parts, renewed while it writes
    wrote: asyncio.Event  # set once this worker's first slice is written (the rebuild then starts)
    retaken: bool = False
    parts: list[list[str]] = field(default_factory=list)
    subscribers: dict[str, list[str]] = field(default_factory=dict)  # uri -> ids, read once
    first: bool = True  # the next slice is this worker's first of the change

    def __post_init__(self) -> None:
        self.parts = [[] for _ in range(PARTS)]
        for sid in self.listed:
            self.parts[part_of(sid)].append(sid)


async def write_parts(fanout: Fanout, job: Job) -> int:
    """Claim and write parts until every part of the change is written; returns how many
    notifications this worker wrote."""
    # Each worker starts at its own part, so two workers seldom ask for the same one.
    start = random.randrange(PARTS)
    pending = [(start + i) % PARTS for i in range(PARTS)]
    written, pause = 0, POLL_MIN
    while pending:
        progressed = False
        for part in list(pending):
            claim = await fanout.events.claims.claim_once(f"{job.key}#{part}", fanout.lease)
            if claim is Claim.HELD:
                continue  # another worker writes it now; asked again after the others
            pending.remove(part)
            progressed = True
            if claim is Claim.DONE:
                continue
            part_key = f"{job.key}#{part}"
            job.leases.hold(part_key)
            try:
                written += await _write_part(fanout, job, part, job.retaken or claim is Claim.RETAKEN)
            except LeaseLost:
                # Stalled past its lease and retaken: the taker writes the rest (skipping what
                # this worker wrote); waited for like a part another worker won.
                pending.append(part)
                continue
            finally:
                job.leases.release(part_key)
            await fanout.events.claims.finish_once(part_key, DONE_TTL)
        if pending and not progressed:
            # Only parts other workers write are left: the next change must wait for them, or
            # the two could reach a stream in the wrong order.
            await asyncio.sleep(pause)
            pause = min(pause * 2, POLL_MAX)
        elif progressed:
            pause = POLL_MIN
    return written


async def _write_part(fanout: Fanout, job: Job, part: int, retaken: bool) -> int:
    written, session_ids = 0, job.parts[part]
    caps = fanout.provider.capabilities
    if job.kind in KINDS and caps.list_changed:
        # [L] server/tools.mdx (resources, prompts) "List Changed Notification": to sessions
        # past initialization only.
        note = notification(f"notifications/{job.kind}/list_changed", None)
        pos = 0
        while pos < len(session_ids):
            size = FIRST_SLICE if job.first else SLICE
            job.first = False
            chunk = session_ids[pos:pos + size]
            pos += size
            ready = await fanout.sessions.initialized_among(chunk)
            written += await _send(fanout, job, part, ready, note, f"{job.key}|list", retaken)
            job.wrote.set()
    if caps.resources_subscribe:
        for uri in job.uris:
            if not isinstance(uri, str):
                continue
            if uri not in job.subscribers:
                job.subscribers[uri] = await fanout.sessions.subscribers(uri)
            # server/resources.mdx "Subscriptions": to the subscribers of the changed URI.
            updated = notification("notifications/resources/updated", {"uri": uri})
            targets = [sid for sid in job.subscribers[uri] if part_of(sid) == part]
            written += await _send(fanout, job, part, targets, updated, f"{job.key}|{uri}", retaken)
    return written


async def _send(fanout: Fanout, job: Job, part: int, session_ids: list[str], note: dict[str, Any],
                tag: str, retaken: bool) -> int:
    if not session_ids:
        return 0
    job.leases.check(f"{job.key}#{part}")
    if retaken:
        # A writer died mid-part: skip the sessions it reached (their entries carry the tag).
        reached = await fanout.events.tagged(session_ids, STANDALONE_STREAM, tag, RETAKE_WINDOW)
        session_ids = [sid for sid in session_ids if sid not in reached]
    # One broadcast (Redis: pipelined in batches), not a round trip per session.
    return await fanout.events.broadcast(session_ids, STANDALONE_STREAM, note, tag=tag)
