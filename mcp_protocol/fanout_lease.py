"""The leases a worker holds while it writes a change: kept alive until it is done.

``ClaimStore.claim_once`` gives a change (and each of its parts) to one writer for a lease of
``LEASE`` seconds; a writer still working when its lease lapses would have its part retaken while
it writes, and some streams would get the notification twice. ``Leases`` renews every lease this
worker holds from one task, one ``renew_once`` round trip every lease/3 for all of them (not one
per part or per slice), so only a writer that died (or stalled past a whole lease) loses its part.

A lease found lost (another worker retook it) is reported by ``check``: the writer stops that part
at its next slice and waits for the taker to finish it, as for a part it never won.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from .stores.events import EventStore

logger = logging.getLogger("mcp_protocol.fanout")


class LeaseLost(Exception):
    """Another worker retook a part this one was writing: it must stop writing it."""


class Leases:
    def __init__(self, events: EventStore, lease: float) -> None:
        self.events, self.lease = events, lease
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
                renewed = await self.events.claims.renew_once(keys, self.lease)
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
