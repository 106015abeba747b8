"""The Redis session store's index of live sessions per endpoint: what the fan-out lists when a
change names the endpoints it reaches (issue 39 item 4; ``SessionStore.endpoint_session_ids``).

Keys (``{P}`` = the store's index tag, beside ``{P}:live``)::

    {P}:endpoint:<json key>  zset sid -> expected expiry (ms), the same score as in {P}:live
    {P}:endpoint_of          hash sid -> that endpoint's zset (to clean it once the sid is gone)

``RedisSessionStore`` keeps them where it keeps ``{P}:live``: added by the create script,
re-scored by ``save`` and by its ``_refresh_index`` (which also drops the entries of vanished
sessions, found through ``{P}:endpoint_of``), removed by ``delete``. This module owns the names
and the listing: one round trip (the stale check and the members), in proportion to the endpoint's
sessions. Two repairs keep the listing right where the store's upkeep cannot:

- an entry stale in the endpoint's zset but not in ``{P}:live`` (its session's index upkeep was cut
  short between two pipelined commands) is re-checked against its session key here;
- sessions stored by a version without this index (a rolling upgrade) are in no endpoint's zset:
  the first listing of each process adopts them, reading the endpoint from their records (when
  ``{P}:endpoint_of`` has fewer entries than ``{P}:live``; one round trip to know).
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable
from typing import Any

from ...redis_client.connection import AsyncClient, RedisConnector
from ...redis_client.pipelined import raise_first

ADOPT_BATCH = 1000  # sessions per HMGET and per pipeline of GETs while adopting


class EndpointIndex:
    def __init__(self, prefix: str, redis: RedisConnector, session_key: Callable[[str], str]) -> None:
        self.prefix, self._redis, self._session_key = prefix, redis, session_key
        self.of = f"{{{prefix}}}:endpoint_of"
        self._adopted = False

    def key(self, endpoint: str) -> str:
        return f"{{{self.prefix}}}:endpoint:{json.dumps(endpoint)}"

    async def ids(self, endpoint: str, live: str,
                  refresh_index: Callable[[AsyncClient], Awaitable[None]]) -> list[str]:
        """The live session ids of ``endpoint`` (``live``: the store's ``{P}:live``; the store's
        index repair, called when an entry's expected expiry passed)."""
        if not self._adopted:
            await self._adopt(await self._redis.ready_client(), live)
            self._adopted = True
        key = self.key(endpoint)
        stale, ids = await self._read(key)
        if stale:
            await refresh_index(await self._redis.ready_client())
            stale, ids = await self._read(key)
            if stale:  # stale here, not in {P}:live: re-checked against the session keys
                await self._recheck(await self._redis.ready_client(), key)
                ids = await self._redis.pipelined().execute("ZRANGE", key, 0, -1, key=key)
        return [str(sid) for sid in ids]

    async def _read(self, key: str) -> tuple[Any, Any]:
        stale, ids = await self._redis.pipelined().pipeline(
            [("ZRANGEBYSCORE", key, "-inf", int(time.time() * 1000), "LIMIT", 0, 1), ("ZRANGE", key, 0, -1)])
        raise_first([stale, ids])
        return stale, ids

    async def _recheck(self, client: AsyncClient, key: str) -> None:
        stale: list[Any] = await client.zrangebyscore(key, "-inf", int(time.time() * 1000))
        ttls = await self._redis.pipelined().pipeline([("PTTL", self._session_key(sid)) for sid in stale])
        raise_first(ttls)
        now = int(time.time() * 1000)
        alive = {sid: now + ttl for sid, ttl in zip(stale, ttls, strict=True) if ttl > 0}
        gone = [sid for sid, ttl in zip(stale, ttls, strict=True) if ttl == -2]
        async with client.pipeline(transaction=False) as pipe:
            if alive:
                pipe.zadd(key, alive, xx=True)
            if gone:
                pipe.zrem(key, *gone)
                pipe.hdel(self.of, *gone)
            await pipe.execute()

    async def _adopt(self, client: AsyncClient, live: str) -> None:
        """Put the live sessions that are in no endpoint's index into their endpoint's, with their
        ``{P}:live`` score. Once per process, and only if some are missing: one round trip
        otherwise; the pass over every live session (0.5 s for 10,000 here) only after an upgrade."""
        # {P}:live and {P}:endpoint_of gain and lose a session together (create script, delete,
        # _refresh_index): fewer entries in the hash means sessions stored without the index.
        async with client.pipeline(transaction=False) as pipe:
            pipe.zcard(live)
            pipe.hlen(self.of)
            live_count, indexed = await pipe.execute()
        if int(indexed) >= int(live_count):
            return
        entries: list[Any] = await client.zrange(live, 0, -1, withscores=True)  # [(sid, score)]
        for start in range(0, len(entries), ADOPT_BATCH):
            batch = entries[start:start + ADOPT_BATCH]
            known: list[Any] = await client.hmget(self.of, [sid for sid, _ in batch])
            missing = [(sid, score) for (sid, score), of in zip(batch, known, strict=True) if of is None]
            if not missing:
                continue
            raws = await self._redis.pipelined().pipeline(
                [("GET", self._session_key(str(sid))) for sid, _ in missing])
            raise_first(raws)
            async with client.pipeline(transaction=False) as pipe:
                for (sid, score), raw in zip(missing, raws, strict=True):
                    if raw is None:
                        continue  # gone meanwhile: {P}:live's own upkeep drops it
                    key = self.key(json.loads(raw).get("endpoint") or "")
                    pipe.zadd(key, {sid: score}, nx=True)
                    pipe.hsetnx(self.of, sid, key)
                await pipe.execute()
