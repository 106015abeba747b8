"""The live tail of every open ``RedisEventStore.listen()`` of a process, read by shared readers.

Owns ``Tail`` (one per event loop) and its ``Watch``es. Holding one Redis connection per open
stream blocked in ``XREAD`` would cost a socket, a pool slot and a task per SSE client (1,000
streams: 1,000 connections); instead each ``listen`` registers a ``Watch`` (its stream key and the
newest entry it has) and waits on an ``asyncio.Event``. Keys are grouped in shards of at most
``SHARD_KEYS``; one task per shard, on a dedicated connection (a blocking command must not share
the pipelined one), runs ``XREAD BLOCK`` over all of its keys at once and hands each watch the
entries after its own position. A shard holds only keys one command may name together
(``Pipelined.shard_of``: any keys on one server; on Redis Cluster the keys of one hash slot, read
on that slot's master) and of one hash tag (the event store's bucket), on one server too: a
fan-out writes its sessions part by part, and a part is one or two buckets
(``fanout.writer.part_of``), so a shard is woken while its buckets are written, not all along.
Redis scans every key of an ``XREAD`` each time it is sent, blocked and woken (1.6 ms for 500
keys): with shards of mixed buckets every shard re-read through the whole fan-out and the XREADs
took more of Redis' CPU than the appends.

No gap, no duplicate ([L] basic/transports.mdx "Resumability"): a shard reads each key from the
*lowest* position of its watches, a watch takes a batch only if the batch was read from at or
before its position (else the next read, from that lower position, brings it), and only entries
newer than what it already has. A key added (or a watch behind the others) must reach the blocked
``XREAD``: ``CLIENT UNBLOCK`` ends the block early and the reader reads again with the new keys.

If a shard's connection fails (or its slot moved), its watches fail with the error (``listen``
raises ``StoreUnavailable``: the SSE response ends, the client resumes with ``Last-Event-ID``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Hashable
from typing import Any

from ...redis_client.connection import UNAVAILABLE, raise_pending_cancel
from ...redis_client.pipelined import Pipelined, PipelinedRedis
from ...redis_client.resp import RespConnection, bulk
from ...store_errors import StreamLagging

logger = logging.getLogger("mcp_protocol.stores")

SHARD_KEYS = 500
READ_COUNT = 256
UNBLOCK_RETRY = 0.002
# s: after a read that brought entries, the next waits this long. A fan-out appends to thousands
# of streams over ~100 ms; reading again at once returned a few entries per XREAD of 500 keys
# (py-spy: a fifth of a worker's CPU went to building and parsing those XREADs). 10 ms rather
# than 2: each XREAD costs Redis ~4 us per key (INFO commandstats), and 10,000 streams took
# 232 -> 142 XREADs and 250 -> 129 ms of Redis CPU per change
# (bench/results/2026-11-24-1350-fanout-session10.md).
LINGER = 0.010
SEQ_BASE = 1_000_000


def hash_tag(key: str) -> str:
    """The ``{...}`` part of a key (the event store's bucket), or the key itself."""
    start = key.find("{")
    end = key.find("}", start + 1)
    return key[start + 1:end] if start >= 0 and end > start + 1 else key


def seq_of(entry_id: str) -> int:
    ms, _, n = entry_id.partition("-")
    return int(ms) * SEQ_BASE + int(n)


def entry_of(seq: int) -> str:
    return f"{seq // SEQ_BASE}-{seq % SEQ_BASE}"


class Watch:
    """One listener's position and inbox. ``max_backlog`` bounds the inbox of a reader that does
    not keep up: past it the watch fails with ``StreamLagging`` (never a silent gap) and the
    client resumes from the last event it got, which Redis still holds."""

    # A list and a future made only while waiting: an asyncio.Event and a deque each cost an
    # idle stream ~370 bytes (tracemalloc), 10,000 of them per worker.
    __slots__ = ("error", "inbox", "key", "last", "loop", "max_backlog", "waiter")

    def __init__(self, key: str, last: int, max_backlog: int) -> None:
        # Kept: asyncio.get_running_loop() makes a getpid() syscall each time (3.8% of a worker
        # in a fan-out, py-spy --native).
        self.loop = asyncio.get_running_loop()
        self.key = key
        self.last = last
        self.max_backlog = max_backlog
        self.inbox: list[tuple[int, str]] | None = None  # made by the first entry (an idle stream has none)
        self.waiter: asyncio.Future[None] | None = None
        self.error: BaseException | None = None

    def offer(self, read_from: int, entries: list[tuple[int, str]]) -> None:
        if read_from > self.last or self.error is not None:
            return  # read past this watch's position: the next read, from lower, brings its part
        inbox = self.inbox
        for seq, payload in entries:
            if seq > self.last:
                if inbox is None:
                    inbox = self.inbox = []
                elif len(inbox) >= self.max_backlog:
                    behind = f"A listener of {self.key} fell {self.max_backlog} events behind"
                    self.fail(StreamLagging(behind))
                    return
                inbox.append((seq, payload))
                self.last = seq
        if inbox:
            self._wake()

    def fail(self, error: BaseException) -> None:
        self.error = error
        self._wake()

    def _wake(self) -> None:
        waiter, self.waiter = self.waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def take(self) -> list[tuple[int, str]] | asyncio.Future[None]:
        """The entries received since the last call, or (none yet) a future to await before
        asking again: awaited by the caller itself, not in a coroutine of this class, whose frame
        an idle stream would hold for its life (~220 bytes, tracemalloc)."""
        batch = self.inbox
        if batch:
            self.inbox = None
            return batch
        if self.error is not None:
            raise self.error
        waiter = self.waiter
        if waiter is None or waiter.done():
            waiter = self.waiter = self.loop.create_future()
        return waiter


class _Shard:
    def __init__(self, tail: Tail, group: Hashable) -> None:
        self.tail = tail
        self.group = group
        self.node: PipelinedRedis | None = None  # the server the reader is on (a Cluster master)
        # A key's watch, or its watches: one as a rule, kept without a list (~80 bytes a stream).
        self.watches: dict[str, Watch | list[Watch]] = {}
        self.cursor: dict[str, int] = {}
        # The XREAD's arguments, encoded once: each key, and each key's start (kept with cursor).
        self.key_bulk: dict[str, bytes] = {}
        self.start_bulk: dict[str, bytes] = {}
        self.conn: RespConnection | None = None
        self.client_id: int | None = None
        self.gen = 0  # bumped whenever the reader must re-read with new keys or positions
        self.seen_gen = 0  # the gen the in-flight XREAD was built from
        self.unblocker: asyncio.Task[None] | None = None
        self.task: asyncio.Task[None] = asyncio.get_running_loop().create_task(
            self._read(), name="mcp-redis-tail")

    def _move(self, key: str, seq: int) -> None:
        if self.cursor.get(key) != seq:
            self.cursor[key] = seq
            self.start_bulk[key] = bulk(entry_of(seq))

    def add(self, watch: Watch) -> None:
        found = self.watches.get(watch.key)
        if found is None:
            self.watches[watch.key] = watch
        elif isinstance(found, list):
            found.append(watch)
        else:
            self.watches[watch.key] = [found, watch]
        cursor = self.cursor.get(watch.key)
        if cursor is None or watch.last < cursor:
            if cursor is None:
                self.key_bulk[watch.key] = bulk(watch.key)
            self._move(watch.key, watch.last)
            self._poke()

    def remove(self, watch: Watch) -> None:
        found = self.watches.get(watch.key)
        if found is None:
            return
        if isinstance(found, list):
            with contextlib.suppress(ValueError):
                found.remove(watch)
            group = found
            if len(found) == 1:
                self.watches[watch.key] = found[0]
        elif found is watch:
            group = []
        else:
            return  # not this shard's watch of the key
        if not group:
            del self.watches[watch.key]
            del self.cursor[watch.key]
            del self.key_bulk[watch.key], self.start_bulk[watch.key]
            if not self.watches:
                self._poke()  # nothing left to read: let the reader end now, not after its block
        else:
            self._move(watch.key, min(w.last for w in group))

    def _poke(self) -> None:
        self.gen += 1
        if self.unblocker is None or self.unblocker.done():
            self.unblocker = asyncio.get_running_loop().create_task(self._unblock())

    async def _unblock(self) -> None:
        # CLIENT UNBLOCK answers 0 when the reader is not blocked yet (its XREAD still in flight):
        # try again shortly, until the reader has read with the current keys.
        while self.seen_gen < self.gen and self.client_id is not None and not self.task.done():
            try:
                # On the reader's own server (set before client_id): the id means nothing elsewhere.
                node = self.node
                if node is not None and await node.execute("CLIENT", "UNBLOCK", self.client_id) == 1:
                    return
            except UNAVAILABLE:
                return  # the reader notices the outage on its own connection
            await asyncio.sleep(UNBLOCK_RETRY)

    async def _read(self) -> None:
        block_ms = self.tail.block_ms
        try:
            if not self.watches:
                return
            node = self.node = await self.tail.pipelined.node_for(next(iter(self.watches)))
            self.conn = await node.open()
            self.client_id = int(await node.call_on(self.conn, "CLIENT", "ID"))
            raise_pending_cancel()
            head = (b"$5\r\nXREAD\r\n$5\r\nCOUNT\r\n" + bulk(READ_COUNT) + b"$5\r\nBLOCK\r\n"
                    + bulk(block_ms) + b"$7\r\nSTREAMS\r\n")
            timeout = block_ms / 1000 + node.socket_timeout
            while self.watches:
                self.seen_gen = self.gen
                read_from = dict(self.cursor)
                packed = b"".join([b"*%d\r\n" % (6 + 2 * len(read_from)), head,
                                   *[self.key_bulk[k] for k in read_from],
                                   *[self.start_bulk[k] for k in read_from]])
                reply: Any = await node.call_packed_on(self.conn, packed, timeout=timeout)
                raise_pending_cancel()
                for key, raw in reply or ():
                    found = self.watches.get(key)
                    if found is None or not raw:
                        continue
                    group = list(found) if isinstance(found, list) else (found,)
                    entries = [(seq_of(eid), fields[1]) for eid, fields in raw]
                    for watch in group:
                        watch.offer(read_from[key], entries)
                    self._move(key, min(w.last for w in group))
                if reply:
                    await asyncio.sleep(LINGER)  # let a fan-out's appends gather (see LINGER)
        except UNAVAILABLE as exc:
            self.tail.pipelined.forget_routes()  # on a Cluster the slot may have moved: ask again
            self._fail(exc)
        except asyncio.CancelledError:
            self._fail(ConnectionError("The event store was closed"))
            raise
        except Exception as exc:  # a bug: fail the listeners rather than leave them hanging
            logger.exception("Redis tail reader failed")
            self._fail(exc)
        finally:
            self.tail.retire(self)
            if self.conn is not None:
                self.conn.abort(ConnectionError("tail reader ended"))

    def _fail(self, error: BaseException) -> None:
        for found in self.watches.values():
            for watch in found if isinstance(found, list) else (found,):
                watch.fail(error)
        self.watches.clear()
        self.cursor.clear()
        self.key_bulk.clear()
        self.start_bulk.clear()


class Tail:
    """The shards of one event loop."""

    def __init__(self, pipelined: Pipelined, block_ms: int, max_backlog: int) -> None:
        self.pipelined, self.block_ms, self.max_backlog = pipelined, block_ms, max_backlog
        self._shards: list[_Shard] = []
        self._home: dict[str, _Shard] = {}

    def watch(self, key: str, last: int) -> Watch:
        watch = Watch(key, last, self.max_backlog)
        shard = self._home.get(key)
        if shard is None or shard.task.done():
            group = (self.pipelined.shard_of(key), hash_tag(key))
            shard = next((s for s in self._shards if s.group == group and len(s.watches) < SHARD_KEYS
                          and not s.task.done()), None)
            if shard is None:
                shard = _Shard(self, group)
                self._shards.append(shard)
            self._home[key] = shard
        shard.add(watch)
        return watch

    def unwatch(self, watch: Watch) -> None:
        shard = self._home.get(watch.key)
        if shard is None:
            return
        shard.remove(watch)
        if watch.key not in shard.watches:
            del self._home[watch.key]

    def retire(self, shard: _Shard) -> None:
        with contextlib.suppress(ValueError):
            self._shards.remove(shard)
        for key in [k for k, s in self._home.items() if s is shard]:
            del self._home[key]

    async def close(self) -> None:
        shards, self._shards = self._shards, []
        for shard in shards:
            shard.task.cancel()
            if shard.unblocker is not None:
                shard.unblocker.cancel()
        for shard in shards:
            with contextlib.suppress(BaseException):
                await shard.task
