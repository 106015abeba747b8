"""``RedisClaimStore``: the claims every worker shares, on Redis (``RedisEventStore.claims``).

Keys (``P`` = the event store's ``prefix`` option)::

    P:claim:{sid}           the owner of the session's standalone GET stream; PX = the claim's
                            ttl, slid by ``refresh_stream`` on every keep-alive
    {P:once:<key>}          a one-time job: "held:<owner>" (PX = the lease, slid by
                            ``renew_once``) or "done" (PX = the ttl given to ``finish_once``)
    {P:once:<key>}:tried    set when the job is first won: a later win is RETAKEN

Each claim is under one hash tag (the session's, or the job's: its lease and its marker), so
every command and script stays within one slot on Redis Cluster. Claims are taken and
refreshed by every open GET stream (1,000 streams: 1,000 refreshes per keep-alive period) and
by every fan-out on the way to its first stream, so all of it goes over the loop's pipelined
connection (``redis_client.pipelined``; ``redis_client.cluster`` on a Cluster), the event
store's own.
"""

from __future__ import annotations

import hashlib
import secrets

import redis.exceptions

from ...redis_client.connection import RedisConnector, px, unavailable_as_store_error
from ...redis_client.pipelined import raise_first
from ...redis_client.resp import encode
from ..claims import Claim, ClaimStore

# KEYS: a claim. ARGV: its owner's value, ms. Claims change only in their owner's hands
# (compare-and-set, compare-and-delete): a script, not PEXPIRE, so a stream claim taken over
# by another worker is not slid by the old owner, nor a job marked "done" for an hour made to
# lapse with a lease, nor another worker's lease taken after ours lapsed.
EXTEND_IF_OWNER = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
"""
DELETE_IF_OWNER = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""
EXTEND_IF_OWNER_SHA = hashlib.sha1(EXTEND_IF_OWNER.encode()).hexdigest()
DELETE_IF_OWNER_SHA = hashlib.sha1(DELETE_IF_OWNER.encode()).hexdigest()


class RedisClaimStore(ClaimStore):
    def __init__(self, connector: RedisConnector, prefix: str) -> None:
        self._redis = connector
        self._prefix = prefix
        # What this worker's leases hold: renew_once slides its own leases only.
        self._held = f"held:{secrets.token_hex(8)}"

    # -- the standalone GET stream of a session ------------------------------------------------
    def stream_key(self, session_id: str) -> str:
        return f"{self._prefix}:claim:{{{session_id}}}"

    async def claim_stream(self, session_id: str, owner: str, ttl: float, *, take_over: bool = False) -> bool:
        only_if_free = () if take_over else ("NX",)
        key = self.stream_key(session_id)
        with unavailable_as_store_error():
            return bool(await self._redis.pipelined().execute(
                "SET", key, owner, *only_if_free, "PX", px(ttl), key=key))

    async def refresh_stream(self, session_id: str, owner: str, ttl: float) -> bool:
        with unavailable_as_store_error():
            return bool(await self._redis.pipelined().evalsha(
                EXTEND_IF_OWNER_SHA, EXTEND_IF_OWNER, [self.stream_key(session_id)], [owner, px(ttl)]))

    async def release_stream(self, session_id: str, owner: str) -> None:
        with unavailable_as_store_error():
            await self._redis.pipelined().evalsha(
                DELETE_IF_OWNER_SHA, DELETE_IF_OWNER, [self.stream_key(session_id)], [owner])

    async def open_streams(self, session_ids: list[str]) -> set[str]:
        if not session_ids:
            return set()
        with unavailable_as_store_error():
            # Pipelined EXISTS, each claim key in its own session's slot (no MULTI across slots).
            replies = await self._redis.pipelined().pipeline(
                [("EXISTS", self.stream_key(sid)) for sid in session_ids])
        raise_first(replies)
        return {sid for sid, held in zip(session_ids, replies, strict=True) if held}

    async def drop_stream(self, session_id: str) -> None:
        """Drop the session's stream claim, whoever holds it (``RedisEventStore.delete_session``)."""
        key = self.stream_key(session_id)
        with unavailable_as_store_error():
            await self._redis.pipelined().execute("DEL", key, key=key)

    # -- one-time jobs ------------------------------------------------------------------------------
    def _once_keys(self, key: str) -> tuple[str, str]:
        once = f"{{{self._prefix}:once:{key}}}"
        return once, once + ":tried"  # one slot: the lease and the "was ever won" marker

    async def claim_once(self, key: str, lease: float) -> Claim:
        once, tried = self._once_keys(key)
        pipelined = self._redis.pipelined()
        with unavailable_as_store_error():
            # One round trip: SET NX GET (Redis >= 7.0) takes the lease or returns the state it
            # found, and the "tried" marker is set in the same write (a fan-out claims a change
            # and its parts on the way to the first stream). Set even when the lease was not
            # taken: then the job was won before (HELD: the marker exists) or finished (DONE:
            # nobody wins it for DONE_TTL; a win after that is RETAKEN, checked for what was
            # written, the safe answer).
            found, tried_before = await pipelined.pipeline_packed(
                encode(("SET", once, self._held, "NX", "GET", "PX", px(lease)))
                + encode(("SET", tried, "1", "NX", "GET", "PX", px(max(lease * 10, 3600.0)))),
                2, key=once)
            raise_first([found, tried_before])
            if found is not None:
                return Claim.DONE if found == "done" else Claim.HELD
        # Won: the first time, or after a winner's lease lapsed (it may have written a part).
        return Claim.WON if tried_before is None else Claim.RETAKEN

    async def renew_once(self, keys: list[str], lease: float) -> set[str]:
        if not keys:
            return set()
        pipelined, ms = self._redis.pipelined(), px(lease)
        with unavailable_as_store_error():
            # One write for every key (each its own slot: on a Cluster, per master).
            replies = await pipelined.pipeline_many(
                [(once, encode(("EVALSHA", EXTEND_IF_OWNER_SHA, 1, once, self._held, ms)), 1)
                 for once in (self._once_keys(key)[0] for key in keys)])
            renewed = set()
            for key, (reply,) in zip(keys, replies, strict=True):
                if isinstance(reply, redis.exceptions.NoScriptError):  # a restarted Redis
                    reply = await pipelined.evalsha(EXTEND_IF_OWNER_SHA, EXTEND_IF_OWNER,
                                                    [self._once_keys(key)[0]], [self._held, ms])
                if isinstance(reply, Exception):
                    raise reply
                if reply == 1:
                    renewed.add(key)
        return renewed

    async def finish_once(self, key: str, ttl: float) -> None:
        once, tried = self._once_keys(key)
        with unavailable_as_store_error():
            await self._redis.pipelined().pipeline_packed(
                encode(("SET", once, "done", "PX", px(ttl))) + encode(("DEL", tried)), 2, key=once)
