"""``RedisSessionStore``: the session records every worker shares ([L] transports.mdx "Session
Management"; no sticky sessions). Values are JSON, never pickle.

Keys (``P`` = the ``prefix`` option, default ``mcp``)::

    P:session:{sid}          session JSON, PX = ttl, slid by load (GETEX) and save (WATCH/MULTI merge)
    {P}:live                 zset sid -> expected expiry (ms): the index of live sessions
    {P}:created              zset sid -> created_at: the admin's newest-first listing
    {P}:owned:<json>         zset sid -> expected expiry (ms) of one principal's sessions (its cap)
    {P}:owner                hash sid -> that principal's owned key (to clean it once the sid is gone)
    {P}:endpoint:<json>      zset sid -> expected expiry (ms) of one endpoint's sessions (the fan-out)
    {P}:endpoint_of          hash sid -> that endpoint's zset (both: ``endpoint_index.py``)
    {P}:subs:<uri>           set of sids subscribed to uri (resources/subscribe)

Per-session keys carry the hash tag ``{sid}`` and the global indexes the tag ``{P}``, so every
multi-key command or script stays within one slot on Redis Cluster. The only operations that
span slots are ``create`` (SET NX on the session slot, then the cap script on the index slot; a
create refused by the cap deletes its session key again) and the index upkeep after
``save``/``delete``; these run as separate commands, and the indexes are treated as hints that
readers verify against the session keys (the truth): ``subscribers`` drops ids whose session no
longer lists the uri, and entries of ``{P}:live`` whose expected expiry passed are checked with
PTTL (``load`` slides the key with one GETEX and leaves the index alone: the hot path stays one
round trip) and either re-scored or removed, in ``{P}:live``, in the principal's ``owned`` zset
and in the endpoint's zset alike (the three carry the same scores: a stale endpoint entry is a
stale ``live`` one). So the caps are two ZCARDs, and a create costs the same at 0 or 10,000 live
sessions: each session is re-checked at most once per idle period (amortized O(log n) per create), and nothing
scans a principal's sessions inside Redis (which blocked Redis for every create while it did).

On Redis Cluster (``mode="cluster"``) nothing changes in this layout: every MULTI/EXEC block and
script names keys of one tag (``{sid}`` or ``{P}``), and the pipelined GETs of the listings, which
span slots, are not transactions (the Cluster client sends each to its slot's master).

``load`` and the pipelined GETs of the listings go over the loop's pipelined client
(``redis_client.pipelined``/``redis_client.cluster``: a fraction of redis-py's CPU per command);
the rest uses redis-py (``redis_client.topology``: a plain, Cluster or Sentinel-managed client).
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

from redis.commands.core import AsyncScript

from ...redis_client.connection import (
    AsyncClient,
    RedisConnector,
    px,
    unavailable_as_store_error,
)
from ...redis_client.options import RedisOptions
from ...redis_client.pipelined import raise_first
from ...redis_client.topology import check_prefix
from ...session import Session
from ...store_errors import CreateError, SessionLimitReached, UpdateError
from ..sessions import SessionStore
from .endpoint_index import EndpointIndex

# KEYS: live, created, the principal's owned zset, principal-of hash, the endpoint's zset,
# endpoint-of hash. ARGV: sid, expiry ms, created_at, max, max per principal (-1: no cap).
# Atomic, so concurrent creates cannot overshoot a cap; O(log n) whatever the number of live
# sessions: the caps are two ZCARDs (the indexes are kept exact by ``_refresh_index`` just
# before, which drops the entries of vanished sessions).
CAPS = """
local max = tonumber(ARGV[4])
if max >= 0 and redis.call('ZCARD', KEYS[1]) >= max then return -1 end
local maxpp = tonumber(ARGV[5])
if maxpp >= 0 and redis.call('ZCARD', KEYS[3]) >= maxpp then return -2 end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
redis.call('ZADD', KEYS[3], ARGV[2], ARGV[1])
redis.call('HSET', KEYS[4], ARGV[1], KEYS[3])
redis.call('ZADD', KEYS[5], ARGV[2], ARGV[1])
redis.call('HSET', KEYS[6], ARGV[1], KEYS[5])
return 1
"""


class RedisSessionStore(SessionStore):
    def __init__(self, *, prefix: str = "mcp", ttl: float = 1800.0, max_sessions: int | None = None,
                 max_sessions_per_principal: int | None = None, redis: RedisOptions | None = None,
                 **options: Any) -> None:
        connection = RedisOptions.take(redis, options)  # flat connection keys too (url=, ...)
        super().__init__(ttl=ttl, max_sessions=max_sessions,
                         max_sessions_per_principal=max_sessions_per_principal, **options)
        self.prefix = check_prefix(prefix)
        self._redis = RedisConnector(connection)
        self._live = f"{{{prefix}}}:live"
        self._created = f"{{{prefix}}}:created"
        self._owner = f"{{{prefix}}}:owner"
        self._endpoints = EndpointIndex(prefix, self._redis, self._key)
        self._scripts: dict[str, AsyncScript] = {}

    def _key(self, session_id: str) -> str:
        return f"{self.prefix}:session:{{{session_id}}}"

    def _owned(self, principal: str | None) -> str:
        return f"{{{self.prefix}}}:owned:{json.dumps(principal)}"

    def _subs(self, uri: str) -> str:
        return f"{{{self.prefix}}}:subs:{uri}"

    async def _run(self, client: AsyncClient, source: str, keys: list[str], args: list[Any]) -> Any:
        script = self._scripts.get(source)
        if script is None:
            script = self._scripts[source] = client.register_script(source)
        return await script(keys=keys, args=args, client=client)

    async def create(self, session: Session) -> None:
        client = await self._redis.ready_client()
        key = self._key(session.id)
        with unavailable_as_store_error():
            if not await client.set(key, json.dumps(session.to_json()), nx=True, px=px(self.ttl)):
                raise CreateError(f"Session {session.id!r} already exists")
            await self._refresh_index(client)
            cap = -1 if self.max_sessions is None else self.max_sessions
            cap_pp = -1 if self.max_sessions_per_principal is None else self.max_sessions_per_principal
            verdict = await self._run(
                client, CAPS, [self._live, self._created, self._owned(session.principal), self._owner,
                               self._endpoints.key(session.endpoint), self._endpoints.of],
                [session.id, _expiry(self.ttl), session.created_at, cap, cap_pp])
            if verdict < 0:
                await client.delete(key)
                if verdict == -1:
                    raise SessionLimitReached("Too many live sessions", cap)
                raise SessionLimitReached("Too many live sessions for this principal", cap_pp)
            if session.subscriptions:
                async with client.pipeline(transaction=False) as pipe:
                    for uri in session.subscriptions:
                        pipe.sadd(self._subs(uri), session.id)
                    await pipe.execute()
        session.stored()

    async def load(self, session_id: str) -> Session | None:
        # The hot path: one GETEX on the loop's pipelined connection (resp.py), no write.
        key = self._key(session_id)
        with unavailable_as_store_error():
            raw = await self._redis.pipelined().execute("GETEX", key, "PX", px(self.ttl), key=key)
        if raw is None:
            return None
        session = Session.from_json(json.loads(raw))
        session.last_seen = time.time()  # this load is the session's latest activity
        return session

    async def touch(self, session_id: str) -> bool:
        # PEXPIRE slides the expiry as load()'s GETEX does, without the record and its parse.
        key = self._key(session_id)
        with unavailable_as_store_error():
            return bool(await self._redis.pipelined().execute("PEXPIRE", key, px(self.ttl), key=key))

    async def save(self, session: Session) -> None:
        changes = session.changes()
        client = await self._redis.ready_client()
        key = self._key(session.id)

        async def merge(pipe: Any) -> None:
            # Optimistic (WATCH): a concurrent save of the same session makes EXEC fail and
            # redis-py runs this again on the new record, so both requests' changes persist.
            raw = await pipe.get(key)
            if raw is None:  # never resurrect a deleted or expired session
                raise UpdateError(f"Session {session.id!r} no longer exists")
            data = changes.apply(json.loads(raw)) if changes else None
            pipe.multi()
            if data is None:
                pipe.pexpire(key, px(self.ttl))
            else:
                pipe.set(key, json.dumps(data), px=px(self.ttl))

        with unavailable_as_store_error():
            await self._redis.transaction(merge, key)
            async with client.pipeline(transaction=False) as pipe:
                expiry = {session.id: _expiry(self.ttl)}
                pipe.zadd(self._live, expiry, xx=True)
                pipe.zadd(self._owned(session.principal), expiry, xx=True)
                pipe.zadd(self._endpoints.key(session.endpoint), expiry, xx=True)
                for uri in changes.subscribed:
                    pipe.sadd(self._subs(uri), session.id)
                for uri in changes.unsubscribed:
                    pipe.srem(self._subs(uri), session.id)
                await pipe.execute()
        session.stored()

    async def delete(self, session_id: str) -> bool:
        client = await self._redis.ready_client()
        with unavailable_as_store_error():
            raw = await client.getdel(self._key(session_id))
            if raw is None:
                return False
            data = json.loads(raw)
            async with client.pipeline(transaction=False) as pipe:
                pipe.zrem(self._live, session_id)
                pipe.zrem(self._created, session_id)
                pipe.zrem(self._owned(data.get("principal")), session_id)
                pipe.hdel(self._owner, session_id)
                pipe.zrem(self._endpoints.key(data.get("endpoint") or ""), session_id)
                pipe.hdel(self._endpoints.of, session_id)
                for uri in data.get("subscriptions") or ():
                    pipe.srem(self._subs(uri), session_id)
                await pipe.execute()
        return True

    async def _refresh_index(self, client: AsyncClient) -> None:
        """Re-check index entries whose expected expiry passed: still-live sessions (slid by
        load) get their real expiry back, vanished ones leave the indexes (their principal's
        ``owned`` zset found through ``{P}:owner``, their endpoint's through ``{P}:endpoint_of``;
        a session stored before the endpoint index existed has none)."""
        stale: list[Any] = await client.zrangebyscore(self._live, "-inf", int(time.time() * 1000))
        if not stale:
            return
        ttls = await self._redis.pipelined().pipeline([("PTTL", self._key(sid)) for sid in stale])
        raise_first(ttls)
        async with client.pipeline(transaction=False) as pipe:
            pipe.hmget(self._owner, stale)
            pipe.hmget(self._endpoints.of, stale)
            owned_keys, endpoint_keys = await pipe.execute()
        now = int(time.time() * 1000)
        alive: dict[Any, int] = {}
        gone: list[Any] = []
        # The per-principal and per-endpoint zsets each stale sid is in: re-scored or cleaned too.
        alive_in: dict[Any, dict[Any, int]] = {}
        gone_from: dict[Any, list[Any]] = {}
        for sid, ttl, owned, endpoint in zip(stale, ttls, owned_keys, endpoint_keys, strict=True):
            if ttl > 0:
                alive[sid] = now + ttl
                for index in (owned, endpoint):
                    if index is not None:
                        alive_in.setdefault(index, {})[sid] = now + ttl
            elif ttl == -2:
                gone.append(sid)
                for index in (owned, endpoint):
                    if index is not None:
                        gone_from.setdefault(index, []).append(sid)
        async with client.pipeline(transaction=False) as pipe:
            if alive:
                pipe.zadd(self._live, alive, xx=True)
            for index, expiries in alive_in.items():
                pipe.zadd(index, expiries, xx=True)
            if gone:
                pipe.zrem(self._live, *gone)
                pipe.zrem(self._created, *gone)
                pipe.hdel(self._owner, *gone)
                pipe.hdel(self._endpoints.of, *gone)
            for index, ids in gone_from.items():
                pipe.zrem(index, *ids)
            await pipe.execute()

    async def list_sessions(self, limit: int = 100, after: tuple[float, str] | None = None) -> list[Session]:
        client = await self._redis.ready_client()
        found: list[Session] = []
        with unavailable_as_store_error():
            start = 0 if after is None else await self._rank_after(client, after)
            while len(found) < limit:
                ids: list[Any] = await client.zrevrange(self._created, start, start + limit - 1)
                if not ids:
                    break
                start += len(ids)
                replies = await self._redis.pipelined().pipeline(
                    [c for sid in ids for c in (("GET", self._key(sid)), ("PTTL", self._key(sid)))])
                raise_first(replies)
                now = time.time()
                gone = []
                for sid, raw, pttl in zip(ids, replies[::2], replies[1::2], strict=True):
                    if raw is None:
                        gone.append(sid)
                        continue
                    session = Session.from_json(json.loads(raw))
                    # The expiry slides on every load and save: the last one was ttl - remaining ago.
                    session.last_seen = now - max(0.0, self.ttl - max(0, pttl) / 1000)
                    found.append(session)
                if gone:
                    await client.zrem(self._created, *gone)
                    start -= len(gone)
        return found[:limit]

    async def _rank_after(self, client: Any, after: tuple[float, str]) -> int:
        """How many entries of the created index come before ``after`` in ZREVRANGE order (score,
        then member, descending): the start of the next page, found without the member itself."""
        score, last = after
        higher = await client.zcount(self._created, f"({score!r}", "+inf")
        tied = await client.zrangebyscore(self._created, score, score)
        return int(higher) + sum(1 for m in tied if (m.decode() if isinstance(m, bytes) else m) >= last)

    async def _get_many(self, ids: list[str]) -> list[str | None]:
        # One GET per key in a pipeline rather than MGET: the keys live in different slots (on a
        # Cluster, each GET goes to its slot's master).
        replies = await self._redis.pipelined().pipeline([("GET", self._key(sid)) for sid in ids])
        raise_first(replies)
        return replies

    async def count(self, principal: str | None = None) -> int:
        client = await self._redis.ready_client()
        with unavailable_as_store_error():
            await self._refresh_index(client)
            return int(await client.zcard(self._live if principal is None else self._owned(principal)))

    async def session_ids(self) -> list[str]:
        # The fan-out's listing, on the way to a change's first stream: the stale check and the
        # listing in one round trip on the pipelined connection (10,000 ids through redis-py's
        # parser and a round trip more cost the first stream ~5-10 ms). Only if some index
        # entry is stale is the index repaired and read again.
        with unavailable_as_store_error():
            stale, ids = await self._redis.pipelined().pipeline(
                [("ZRANGEBYSCORE", self._live, "-inf", int(time.time() * 1000), "LIMIT", 0, 1),
                 ("ZRANGE", self._live, 0, -1)])
            raise_first([stale, ids])
            if stale:
                await self._refresh_index(await self._redis.ready_client())
                ids = await self._redis.pipelined().execute("ZRANGE", self._live, 0, -1, key=self._live)
        return [str(sid) for sid in ids]

    async def endpoint_session_ids(self, endpoint: str) -> list[str]:
        # As session_ids, on the endpoint's own zset: one round trip, in proportion to its sessions.
        with unavailable_as_store_error():
            return await self._endpoints.ids(endpoint, self._live, self._refresh_index)

    async def initialized_session_ids(self) -> list[str]:
        # The index, then one pipelined GET per session; only the state is looked at.
        with unavailable_as_store_error():
            ids = await self.session_ids()
            raws = await self._get_many(ids)
        return [sid for sid, raw in zip(ids, raws, strict=True) if raw is not None and _ready(raw)]

    async def initialized_among(self, session_ids: list[str]) -> list[str]:
        if not session_ids:
            return []
        with unavailable_as_store_error():
            raws = await self._get_many(session_ids)
        return [sid for sid, raw in zip(session_ids, raws, strict=True) if raw is not None and _ready(raw)]

    async def subscribers(self, uri: str) -> list[str]:
        client = await self._redis.ready_client()
        with unavailable_as_store_error():
            ids: list[Any] = sorted(await client.smembers(self._subs(uri)))
            if not ids:
                return []
            raws = await self._get_many(ids)
            live = [sid for sid, raw in zip(ids, raws, strict=True)
                    if raw is not None and uri in (json.loads(raw).get("subscriptions") or ())]
            stale = set(ids) - set(live)
            if stale:
                await client.srem(self._subs(uri), *stale)
        return [str(sid) for sid in live]

    async def close(self) -> None:
        await self._redis.close()


# The end of a record as json.dumps(Session.to_json()) writes it: "state" is followed only by
# two numbers, so a match at the last '"state": "' is the record's own state (a client's data,
# earlier in the record, cannot end it this way).
_STATE_TAIL = re.compile(r'"state": "([a-z]+)", "created_at": [^,"{}\[\]]+, "last_seen": [^,"{}\[\]]+\}')


def _ready(raw: str) -> bool:
    """Whether a stored session record is past initialization. Read from the record's tail
    without parsing it (the fan-out checks every session of a change: 2.4 -> 0.5 us each);
    parsed if the tail is not the expected one."""
    at = raw.rfind('"state": "')
    found = _STATE_TAIL.fullmatch(raw, at) if at >= 0 else None
    if found is None:
        return bool(json.loads(raw).get("state") == "ready")
    return found.group(1) == "ready"


def _expiry(ttl: float) -> int:
    return int(time.time() * 1000) + px(ttl)
