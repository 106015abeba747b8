"""The hot-path client on Redis Cluster: one ``PipelinedRedis`` per master, commands routed by slot.

Owns ``PipelinedCluster`` (the ``pipelined.Pipelined`` interface). The slot map comes from ``CLUSTER
SLOTS``, asked of a known node (the seed of ``url`` first); a key's slot is redis-py's
``key_slot`` (CRC16 of its hash tag). Every command and every part of a pipeline names one key,
and the stores keep each part within one slot (``{sid}`` for a session's keys, ``{P:ev:<bucket>}``
for a bucket's event logs), so a part never spans nodes.

Redirections ([Redis Cluster spec] "Redirection and resharding"):

- ``MOVED``: the slot has a new owner (resharding, failover): the map is refreshed and the
  command sent again, to the node MOVED names (a MULTI/EXEC block refused with MOVED was not
  executed: EXECABORT). Not to the refreshed map's: while the new owner is announced node by
  node, a map asked of one that has not heard yet sent the part back to the old owner, four
  MOVED in a row, and it gave up (seen under load in ``test_cluster_migration``).
- ``ASK``: the slot is migrating and this key is already on the target: ``ASKING`` then the
  command (or the whole block: ASKING stays in force inside MULTI) on the target.
- ``TRYAGAIN``: a multi-key command (or block) whose keys the migration has split between the
  two masters: the source answers ``ASK``, the target ``TRYAGAIN``, until the last key moves.
  Retried with a pause doubling from 20 to 200 ms, for up to ``TRYAGAIN_BUDGET`` seconds.
- a node that cannot be reached: the map is refreshed (its replica may have taken over) and the
  command retried once if the caller allows a retry.

At most ``REDIRECTS`` MOVED/reconnect rounds, and ASK/TRYAGAIN for at most ``TRYAGAIN_BUDGET``
seconds; then the last error propagates (``UNAVAILABLE``: a 503). Found by
``tests/faults/test_cluster_migration.py``: with five attempts in all, an append whose stream had
moved but whose index had not gave up (EXECABORT) after 100 ms of ASK/TRYAGAIN ping-pong.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Hashable
from typing import Any

import redis.exceptions
from redis.asyncio.connection import parse_url
from redis.crc import REDIS_CLUSTER_HASH_SLOTS, key_slot

from .pipelined import Part, PipelinedRedis
from .resp import Reply, encode

REDIRECTS = 8  # MOVED/reconnect rounds; from the second on, with a pause (~0.7 s in all)
TRYAGAIN_PAUSE = 0.02  # s: first pause after TRYAGAIN, doubling up to TRYAGAIN_PAUSE_MAX
TRYAGAIN_PAUSE_MAX = 0.2
# s: how long a command or block whose keys a slot migration has split between two masters keeps
# being retried (TRYAGAIN: neither master can run it until the last key moves). Counted in time,
# not attempts: the split lasts until the migrating tool moves the other key, tens of ms for
# redis-cli's batches, longer for a slow one.
TRYAGAIN_BUDGET = 2.0
_ASKING = encode(("ASKING",))
_AskError = redis.exceptions.AskError  # MovedError is a subclass


def _slot(key: str) -> int:
    return key_slot(key.encode())


class PipelinedCluster:
    def __init__(self, url: str, *, socket_timeout: float = 5.0, connect_timeout: float = 1.0) -> None:
        self.url = url
        self.socket_timeout = socket_timeout
        self.connect_timeout = connect_timeout
        options = parse_url(url)
        self._seeds = [(options.get("host", "127.0.0.1"), int(options.get("port", 6379)))]
        self._nodes: dict[tuple[str, int], PipelinedRedis] = {}
        self._slots: list[PipelinedRedis] | None = None
        self._refreshing: asyncio.Future[list[PipelinedRedis]] | None = None

    def _node_at(self, address: tuple[str, int]) -> PipelinedRedis:
        node = self._nodes.get(address)
        if node is None:
            node = self._nodes[address] = PipelinedRedis(
                self.url, socket_timeout=self.socket_timeout, connect_timeout=self.connect_timeout,
                address=address)
        return node

    # -- the slot map --------------------------------------------------------------------------
    async def _routes(self) -> list[PipelinedRedis]:
        if self._slots is not None:
            return self._slots
        if self._refreshing is None:  # one CLUSTER SLOTS for every caller that needs the map
            self._refreshing = asyncio.ensure_future(self._load_routes())
            self._refreshing.add_done_callback(self._loaded)
        return await asyncio.shield(self._refreshing)

    def _loaded(self, future: asyncio.Future[list[PipelinedRedis]]) -> None:
        self._refreshing = None
        if not future.cancelled() and future.exception() is None:
            self._slots = future.result()

    async def _load_routes(self) -> list[PipelinedRedis]:
        error: BaseException | None = None
        for address in [*self._nodes, *self._seeds]:
            try:
                ranges = await self._node_at(address).execute("CLUSTER", "SLOTS")
            except (redis.exceptions.RedisError, OSError) as exc:
                error = exc
                continue
            slots: list[PipelinedRedis | None] = [None] * REDIS_CLUSTER_HASH_SLOTS
            for start, end, master, *_replicas in ranges:
                host = master[0] if master[0] not in ("", "?") else address[0]
                node = self._node_at((host, int(master[1])))
                slots[start:end + 1] = [node] * (end - start + 1)
            if any(node is None for node in slots):
                error = redis.exceptions.SlotNotCoveredError("Some hash slots have no master")
                continue
            self._drop_unused(slots)
            return slots  # type: ignore[return-value]  # every entry was checked above
        raise redis.exceptions.ConnectionError(f"No Redis Cluster node answered CLUSTER SLOTS: {error}")

    def _drop_unused(self, slots: list[PipelinedRedis | None]) -> None:
        used = set(slots)
        for address, node in list(self._nodes.items()):
            if node not in used and address not in self._seeds:
                node.close()
                del self._nodes[address]

    def forget_routes(self) -> None:
        """The map may be wrong (a redirection, a node lost): reload it on next use."""
        self._slots = None

    async def node_for(self, key: str) -> PipelinedRedis:
        return (await self._routes())[_slot(key)]

    def shard_of(self, key: str) -> Hashable:
        return _slot(key)  # one multi-key command (XREAD of many streams) per slot

    # -- commands ------------------------------------------------------------------------------
    async def execute(self, *args: Any, key: str) -> Reply:
        error: BaseException | None = None
        loop = asyncio.get_running_loop()
        settle_by, pause, redirects = loop.time() + TRYAGAIN_BUDGET, TRYAGAIN_PAUSE, 0
        moved_to: PipelinedRedis | None = None
        while redirects < REDIRECTS:
            redirects += 1
            node, moved_to = moved_to or await self.node_for(key), None
            try:
                return await node.execute(*args)
            except _AskError as exc:
                error = exc
                if isinstance(exc, redis.exceptions.MovedError):
                    self.forget_routes()
                    # Sent where MOVED points, not where the reloaded map says: a node asked
                    # for the map mid-resharding may not know the new owner yet. A second one
                    # in a row waits (see _send_parts).
                    moved_to = self._node_at((exc.host, int(exc.port)))
                    if redirects > 1:
                        await asyncio.sleep(pause)
                        pause = min(pause * 2, TRYAGAIN_PAUSE_MAX)
                    continue
                asked = await self._node_at((exc.host, int(exc.port))).pipeline_packed(
                    _ASKING + encode(args), 2)
                if isinstance(asked[1], redis.exceptions.TryAgainError) and loop.time() < settle_by:
                    error, redirects = asked[1], redirects - 1  # keys split by the migration: wait
                    await asyncio.sleep(pause)
                    pause = min(pause * 2, TRYAGAIN_PAUSE_MAX)
                    continue
                if isinstance(asked[1], Exception):
                    raise asked[1] from None
                return asked[1]
            except redis.exceptions.TryAgainError as exc:
                error = exc
                if loop.time() >= settle_by:
                    break
                redirects -= 1  # a wait for the migration, not a redirection
                await asyncio.sleep(pause)
                pause = min(pause * 2, TRYAGAIN_PAUSE_MAX)
            except redis.exceptions.ConnectionError as exc:  # PipelinedRedis already retried once
                error = exc
                self.forget_routes()
                if node is await self.node_for(key):
                    raise
        assert error is not None
        raise error

    async def evalsha(self, sha: str, source: str, keys: list[str], args: list[Any]) -> Reply:
        try:
            return await self.execute("EVALSHA", sha, len(keys), *keys, *args, key=keys[0])
        except redis.exceptions.NoScriptError:  # each node has its own script cache
            return await self.execute("EVAL", source, len(keys), *keys, *args, key=keys[0])

    async def pipeline(self, commands: list[tuple[Any, ...]]) -> list[Reply]:
        """Each command's first argument is its key; commands of different slots are fine."""
        parts = [(str(c[1]), encode(c), 1) for c in commands]
        return [replies[0] for replies in await self.pipeline_many(parts)]

    async def pipeline_packed(self, packed: bytes, count: int, *, key: str,
                              retry: bool = False) -> list[Reply]:
        return (await self._send_parts([(key, packed, count)], retry=retry))[0]

    async def pipeline_many(self, parts: list[Part]) -> list[list[Reply]]:
        return await self._send_parts(parts, retry=False)

    async def _send_parts(self, parts: list[Part], *, retry: bool) -> list[list[Reply]]:
        """Each part to its slot's master, one write per master, the masters at once; a part
        refused by a redirection is sent again where it points (a refused part or block was not
        executed). After the last attempt a part's replies are returned as they are (the
        caller raises their errors)."""
        results: list[list[Reply]] = [[] for _ in parts]
        todo = list(range(len(parts)))
        asking: dict[int, PipelinedRedis] = {}  # parts sent next to a node with ASKING first
        moved: dict[int, PipelinedRedis] = {}  # parts sent next to the node a MOVED named
        loop = asyncio.get_running_loop()
        settle_by, pause_for, redirects = loop.time() + TRYAGAIN_BUDGET, TRYAGAIN_PAUSE, 0
        while todo:
            last = redirects + 1 >= REDIRECTS
            by_node: dict[PipelinedRedis, list[int]] = {}
            for i in todo:
                node = asking.get(i) or moved.get(i) or await self.node_for(parts[i][0])
                by_node.setdefault(node, []).append(i)
            batches = list(by_node.items())
            outcomes = await asyncio.gather(
                *(self._send(node, [parts[i] for i in indexes], [i in asking for i in indexes], retry)
                  for node, indexes in batches), return_exceptions=True)
            asking, moved, todo, pause, redirected = {}, {}, [], False, False
            for (_, indexes), outcome in zip(batches, outcomes, strict=True):
                if isinstance(outcome, BaseException):
                    if isinstance(outcome, redis.exceptions.ConnectionError):
                        self.forget_routes()  # the node may have failed over
                        if retry and not last:
                            todo += indexes
                            redirected = True
                            continue
                    raise outcome
                for i, replies in zip(indexes, outcome, strict=True):
                    redirect = _redirect(replies)
                    results[i] = replies
                    if redirect is None:
                        continue
                    if isinstance(redirect, redis.exceptions.MovedError):
                        if not last:
                            todo.append(i)
                            redirected = True
                            self.forget_routes()
                            # Sent next where MOVED points: the map reloaded from a node that
                            # has not heard of the new owner yet would send it back again.
                            moved[i] = self._node_at((redirect.host, int(redirect.port)))
                    elif loop.time() < settle_by:
                        # ASK, or TRYAGAIN on the target: the slot is migrating. Its keys may be
                        # split between the masters (ASK there, TRYAGAIN here) until the last
                        # one moves: bounded by time, not counted as redirections.
                        todo.append(i)
                        if isinstance(redirect, _AskError):
                            asking[i] = self._node_at((redirect.host, int(redirect.port)))
                        else:
                            pause = True
            redirects += redirected
            # A second MOVED in a row waits too: while the new owner is announced node by node,
            # the old owner already says MOVED (to the new one) and the new one, still
            # importing, says MOVED back, until it hears; sent again at once, the part ran out
            # of attempts within a millisecond (EXECABORT in test_cluster_migration).
            if (pause or (redirected and redirects > 1)) and todo:
                await asyncio.sleep(pause_for)
                pause_for = min(pause_for * 2, TRYAGAIN_PAUSE_MAX)
        return results

    @staticmethod
    async def _send(node: PipelinedRedis, parts: list[Part], asking: list[bool],
                    retry: bool) -> list[list[Reply]]:
        packed = b"".join([(_ASKING + p if ask else p) for (_, p, _), ask in zip(parts, asking, strict=True)])
        counts = [n + ask for (_, _, n), ask in zip(parts, asking, strict=True)]
        replies = await node.pipeline_packed(packed, sum(counts), retry=retry and len(parts) == 1)
        out, at = [], 0
        for count, ask in zip(counts, asking, strict=True):
            out.append(replies[at + ask:at + count])
            at += count
        return out

    def close(self) -> None:
        nodes, self._nodes, self._slots = self._nodes, {}, None
        for node in nodes.values():
            with contextlib.suppress(Exception):
                node.close()


def _redirect(replies: list[Reply]) -> BaseException | None:
    """The redirection that refused a part, if any (``MOVED``/``ASK``/``TRYAGAIN``)."""
    for reply in replies:
        if isinstance(reply, _AskError | redis.exceptions.TryAgainError):
            return reply
    return None
