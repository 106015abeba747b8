"""Keeping upstreams current (issue 40 item 3): each enabled upstream's listen stream held open by
exactly one worker of the fleet, under a lease, and a debounced sync on its ``list_changed``.

Every serving loop runs one ``Keeper``. Every ``tick`` seconds it tries, for each enabled upstream
it does not hold, the lease ``upstream-listen:<id>`` on the event store's claim store
(``ClaimStore.claim_stream``: atomic across workers, owner-checked, lapsing by itself; memory for
one process, Redis for a fleet). The holder renews it every ``lease / 3`` seconds; a holder killed
-9 stops renewing, and another worker takes the upstream over within ``lease + tick`` seconds. A
renewal refused (the lease lapsed while this loop stalled) ends the hold at once; two holders for
a moment would only sync twice, which changes nothing the second time.

While held, ``listen.hold`` keeps the stream open and reconnects it with exponential backoff
(``BACKOFF_MIN`` doubling to ``BACKOFF_MAX``, jittered) when the upstream drops it; an upstream
with no listen stream (``NoListenStream``: GET answered 405, no ``listChanged``) is left to the
periodic sync and probed again after ``NO_STREAM_RETRY``. Each ``list_changed``, and each
(re)connect (what changed while nobody listened is unknown), marks the upstream dirty; a dirty
upstream is synced ``debounce`` seconds later (and at least ``GAP`` seconds after its last sync)
through the one sync path (``sync_upstream_async``), so a burst of notifications is one sync: one
change set, one ``list_changed`` to our clients through the fan-out, removals included and the
never-prune rules unchanged.

The rows are read every ``ROWS_EVERY`` seconds (the upstreams' ids and versions: an operator's edit
bumps the version, and the hold restarts with the new settings), never on the hot path.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import random
import secrets
import socket
import time
from collections.abc import Callable

from asgiref.sync import sync_to_async
from django.conf import settings
from prometheus_client import Gauge

from mcp_protocol.stores.claims import ClaimStore

from ..models.upstreams import Upstream
from .config import UpstreamConfig
from .errors import NoListenStream, UpstreamError
from .sync import summary, sync_upstream_async

logger = logging.getLogger(__name__)

LEASE = 5.0  # s: REGISTRY_UPSTREAM_LISTEN_LEASE (0: no listen streams in this process)
DEBOUNCE = 0.5  # s: REGISTRY_UPSTREAM_LISTEN_DEBOUNCE
GAP = 2.0  # s: the least time between two syncs of one upstream on its notifications
BACKOFF_MIN, BACKOFF_MAX = 0.5, 30.0
NO_STREAM_RETRY = 300.0
ROWS_EVERY = 5.0

# Which worker holds which stream, for an operator: summed over the fleet's workers it is 1 for an
# upstream whose stream is open, 0 for one without (none offered, or unreachable: see its health).
LISTENING = Gauge(
    "mcp_upstream_listening", "1 while this worker holds the upstream's listen stream open.",
    ["upstream"], multiprocess_mode="livesum",
)


def lease() -> float:
    return float(getattr(settings, "REGISTRY_UPSTREAM_LISTEN_LEASE", LEASE))


def debounce() -> float:
    return float(getattr(settings, "REGISTRY_UPSTREAM_LISTEN_DEBOUNCE", DEBOUNCE))


def lease_key(pk: int) -> str:
    return f"upstream-listen:{pk}"


def _enabled() -> dict[int, int]:
    return dict(Upstream.objects.filter(enabled=True).values_list("pk", "version"))


def _row(pk: int) -> Upstream | None:
    return Upstream.objects.filter(pk=pk, enabled=True).first()


class _Hold:
    """One upstream's listen stream held by this worker: the stream, the lease's renewals, the
    debounced syncs. ``end`` stops the three."""

    def __init__(self, keeper: Keeper, pk: int, version: int) -> None:
        self.keeper, self.pk, self.version = keeper, pk, version
        self.dirty = asyncio.Event()
        self.syncs = 0  # syncs this hold ran (the tests' and the logs' figure)
        self.name = ""  # the upstream's, once its row is read (the gauge's label)
        self.tasks = [asyncio.create_task(t) for t in (self._stream(), self._renew(), self._sync())]

    def changed(self, kind: str) -> None:
        logger.debug("upstream %s: %s changed", self.pk, kind)
        if kind == "reconnected" and self.name:
            LISTENING.labels(self.name).set(1)
        self.dirty.set()

    async def _stream(self) -> None:
        delay = BACKOFF_MIN
        while True:
            row = await sync_to_async(_row, thread_sensitive=False)(self.pk)
            if row is None:
                return  # disabled or deleted: the keeper drops the hold at its next look
            self.name = row.name
            opened = time.monotonic()
            try:
                from .listen import hold  # the official SDK, loaded with the first stream held

                why = await hold(UpstreamConfig.of(row), self.changed)
                logger.info("upstream %s: listen stream ended: %s", row.name, why)
            except NoListenStream as exc:
                logger.info("upstream %s: no listen stream (%s); the periodic sync keeps it current",
                            row.name, exc)
                await asyncio.sleep(NO_STREAM_RETRY)
                continue
            except UpstreamError as exc:
                logger.info("upstream %s: listen stream not opened: %s", row.name, exc)
            except Exception:  # a bug or a broken upstream: logged, and the stream tried again
                logger.exception("upstream %s: listen stream failed", row.name)
            finally:
                LISTENING.labels(row.name).set(0)
            if time.monotonic() - opened > BACKOFF_MAX:
                delay = BACKOFF_MIN  # it was up a while: a fresh drop, not a flapping upstream
            await asyncio.sleep(delay * random.uniform(0.8, 1.2))
            delay = min(delay * 2, BACKOFF_MAX)

    async def _renew(self) -> None:
        keeper = self.keeper
        renewed = time.monotonic()
        while True:
            await asyncio.sleep(keeper.lease / 3)
            try:
                held = await keeper.claims().refresh_stream(lease_key(self.pk), keeper.owner, keeper.lease)
            except Exception:  # the claim store unreachable: the lease may run on, for a while
                logger.warning("upstream %s: listen lease not renewed", self.pk, exc_info=True)
                held = time.monotonic() - renewed < keeper.lease
            else:
                renewed = time.monotonic()
            if not held:
                logger.warning("upstream %s: listen lease lost; another worker holds the stream", self.pk)
                keeper.lost(self.pk)
                return

    async def _sync(self) -> None:
        last = -float("inf")  # the first sync waits for the window only
        while True:
            await self.dirty.wait()
            # The window: notifications arriving in it fold into this one sync. An upstream sending
            # list_changed without pause gets one sync per ``gap`` at most, not syncs back to back.
            await asyncio.sleep(max(self.keeper.debounce, last + self.keeper.gap - time.monotonic()))
            self.dirty.clear()
            last = time.monotonic()
            try:
                row = await sync_to_async(_row, thread_sensitive=False)(self.pk)
                if row is None:
                    continue
                report = await sync_upstream_async(row)
                self.syncs += 1
                logger.info("upstream %s changed: synced: %s", row.name, summary(report))
            except Exception:  # the database down: the next notification or periodic sync retries
                logger.exception("upstream %s: sync on list_changed failed", self.pk)

    async def end(self) -> None:
        current = asyncio.current_task()
        for task in self.tasks:
            if task is not current:
                task.cancel()
        for task in self.tasks:
            if task is not current:
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task


class Keeper:
    """This serving loop's share of the fleet's listen streams (see the module docstring)."""

    def __init__(self, claims: ClaimStore | Callable[[], ClaimStore], *, lease: float,
                 debounce: float, tick: float | None = None, gap: float = GAP) -> None:
        # A callable: the store is looked up at the first look, not when the provider starts.
        self._claims = claims
        self.lease, self.debounce, self.gap = lease, debounce, gap
        self.tick = tick if tick is not None else min(1.0, lease / 5)
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"
        self.loop = asyncio.get_running_loop()
        self.holds: dict[int, _Hold] = {}
        self._rows: dict[int, int] = {}
        self._rows_at = -ROWS_EVERY
        self._task: asyncio.Task[None] | None = None
        self._ending: set[asyncio.Task[None]] = set()

    def claims(self) -> ClaimStore:
        return self._claims() if callable(self._claims) else self._claims

    async def start(self) -> None:
        self._task = asyncio.create_task(self._run())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        for pk in list(self.holds):
            await self._drop(pk)

    def lost(self, pk: int) -> None:
        """The lease lapsed under this worker: the stream ends (the renewal task calls this)."""
        held = self.holds.pop(pk, None)
        if held is not None:
            ending = asyncio.create_task(held.end())
            self._ending.add(ending)  # referenced until done: a task only the loop holds may vanish
            ending.add_done_callback(self._ending.discard)

    async def _run(self) -> None:
        while True:
            try:
                await self.check()
            except Exception:  # the database or the claim store down: try again next tick
                logger.exception("upstream listen leases: check failed")
            await asyncio.sleep(self.tick)

    async def check(self) -> set[int]:
        """Take the free leases of enabled upstreams, drop the holds of the others; what is held."""
        if time.monotonic() - self._rows_at >= ROWS_EVERY:
            self._rows_at = time.monotonic()  # the database down: asked (and logged) again in ROWS_EVERY
            self._rows = await sync_to_async(_enabled, thread_sensitive=False)()
        for pk in [pk for pk, held in self.holds.items() if self._rows.get(pk) != held.version]:
            await self._drop(pk)  # disabled, deleted or edited (a new URL, auth, timeouts)
        claims = self.claims()
        for pk, version in self._rows.items():
            if pk not in self.holds and await claims.claim_stream(lease_key(pk), self.owner, self.lease):
                logger.info("upstream %s: this worker (%s) holds the listen stream", pk, self.owner)
                self.holds[pk] = _Hold(self, pk, version)
        return set(self.holds)

    async def _drop(self, pk: int) -> None:
        held = self.holds.pop(pk, None)
        if held is None:
            return
        await held.end()
        with contextlib.suppress(Exception):  # unreachable store: the lease lapses by itself
            await self.claims().release_stream(lease_key(pk), self.owner)
