"""Who writes a change, and each of its parts: claiming it, waiting one's turn, keeping the lease.

``ClaimStore.claim_once(key, lease)`` gives a change (and each of its parts) to one writer across
the cluster for ``lease`` seconds (``WON``); a writer that dies lets the lease lapse and the next
to ask takes the job over (``RETAKEN``), knowing part of it may be written. ``take_turn`` asks for
a change until it is this writer's to write, to help write (its owner split it in parts) or
written: a change is never skipped while its owner works on it, so change N+1 never overtakes N.

``LeaseKeeper`` renews every lease the writer holds from one task, one ``renew_once`` round trip
every lease/3 for all of them (not one per part or per slice): a writer still working when its
lease lapsed would have its part retaken while it writes, and some streams would get the
notification twice; so only a writer that died (or stalled past a whole lease) loses its part. A
lease found lost (another worker retook it) is reported by ``check``: the writer stops that part at
its next slice and waits for the taker to finish it, as for a part it never won.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from ..stores.claims import Claim, ClaimStore

logger = logging.getLogger("mcp_protocol.fanout")

LEASE = 5.0  # s: a change's (and a part's) writer holds it this long; then it is taken over
PROBE = 0.001  # s: the lease of a probe of the "split" marker (nobody works under it)
DONE_TTL = 3600.0  # s: how long a written change (or part) stays known as written
POLL_MIN, POLL_MAX = 0.002, 0.05  # s: pauses between two asks while other workers write


def split_key(key: str) -> str:
    """The marker its owner sets once the change ``key`` is written in parts (others may help)."""
    return f"{key}#split"


def retaken_key(key: str) -> str:
    """The marker the owner of a RETAKEN change sets before it marks the change split: the workers
    that help with its parts must check every part for what the dead owner wrote, too."""
    return f"{key}#retaken"


async def was_retaken(claims: ClaimStore, key: str) -> bool:
    """Did the owner of the change ``key`` retake it? Asked by a helper (HELD) once it is split."""
    return await claims.claim_once(retaken_key(key), PROBE) is Claim.DONE


def part_key(key: str, part: int) -> str:
    return f"{key}#{part}"


async def take_turn(claims: ClaimStore, key: str, lease: float) -> Claim:
    """WON or RETAKEN: this writer owns the change ``key`` (RETAKEN: an earlier owner died and may
    have written some of it); HELD: another writer owns it and has split it in parts, which this
    one helps write; DONE: written."""
    pause = POLL_MIN
    while True:
        claim = await claims.claim_once(key, lease)
        if claim is not Claim.HELD:
            return claim
        # A probe with a lease that lapses at once: DONE only once the owner split it.
        if await claims.claim_once(split_key(key), PROBE) is Claim.DONE:
            return Claim.HELD
        # Its owner has not started the parts (or died first): the next change must wait,
        # or the two could reach a stream in the wrong order.
        await asyncio.sleep(pause)
        pause = min(pause * 2, POLL_MAX)


class LeaseLost(Exception):
    """Another worker retook a part this one was writing: it must stop writing it."""


class LeaseKeeper:
    """Keeps alive the leases a writer holds on a change and its parts, until it is done."""

    def __init__(self, claims: ClaimStore, lease: float) -> None:
        self.claims, self.lease = claims, lease
        self._held: set[str] = set()
        self._lost: set[str] = set()
        self._task: asyncio.Task[None] | None = None

    def hold(self, key: str) -> None:
        """``key`` was won: renew it until ``release``."""
        self._held.add(key)
        if self._task is None:
            self._task = asyncio.ensure_future(self._renew())

    def release(self, key: str) -> None:
        """``key`` was finished (or abandoned): no longer renewed."""
        self._held.discard(key)
        self._lost.discard(key)

    def check(self, key: str) -> None:
        if key in self._lost:
            raise LeaseLost(key)

    async def _renew(self) -> None:
        while True:
            await asyncio.sleep(self.lease / 3)
            keys = list(self._held)
            if not keys:
                continue
            try:
                renewed = await self.claims.renew_once(keys, self.lease)
            except Exception:
                # Redis unreachable: the next round tries again (the lease has 2/3 left).
                logger.warning("could not renew the fan-out leases %s", keys, exc_info=True)
                continue
            for key in keys:
                if key not in renewed and key in self._held:
                    logger.warning("fan-out lease %s lapsed and was retaken: stopping it", key)
                    self._lost.add(key)

    async def close(self) -> None:
        task, self._task = self._task, None
        self._held.clear()
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
