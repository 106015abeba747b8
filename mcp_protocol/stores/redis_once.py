"""``OnceClaims``: the event store's exactly-once job claims on Redis (``EventStore.claim_once``,
``finish_once``, ``renew_once``): which worker writes a fan-out change or one of its parts.

Keys (``P`` = prefix), both under one hash tag, so one slot on a Cluster::

    {P:once:<key>}          "held:<owner>" (PX = the lease, slid by ``renew``) or "done" (PX = ttl)
    {P:once:<key>}:tried    set when the job is first won: a later win is RETAKEN

``RedisEventStore`` delegates to this; it shares the store's connector (the loop's pipelined
connection, ``fast.py``; ``cluster.py`` on a Cluster).
"""

from __future__ import annotations

import hashlib
import secrets

import redis.exceptions

from ..redis_client.connection import RedisConnector, px, unavailable_as_store_error
from ..redis_client.resp import encode
from .base import Claim

# KEYS: a claim_once key. ARGV: this owner's "held:<owner>" value, lease ms. A script, not
# PEXPIRE: only a lease this worker still holds is slid, never a "done" (a job marked done for an
# hour must not lapse with a lease) nor another worker's lease taken after ours lapsed.
_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
"""
RENEW_SHA = hashlib.sha1(_RENEW.encode()).hexdigest()


class OnceClaims:
    def __init__(self, connector: RedisConnector, prefix: str) -> None:
        self._redis = connector
        self._prefix = prefix
        # What this worker's leases hold: renew slides its own leases only.
        self._held = f"held:{secrets.token_hex(8)}"

    def _keys(self, key: str) -> tuple[str, str]:
        once = f"{{{self._prefix}:once:{key}}}"
        return once, once + ":tried"  # one slot: the lease and the "was ever won" marker

    async def claim(self, key: str, lease: float) -> Claim:
        once, tried = self._keys(key)
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
            for reply in (found, tried_before):
                if isinstance(reply, Exception):
                    raise reply
            if found is not None:
                return Claim.DONE if found == "done" else Claim.HELD
        # Won: the first time, or after a winner's lease lapsed (it may have written a part).
        return Claim.WON if tried_before is None else Claim.RETAKEN

    async def finish(self, key: str, ttl: float) -> None:
        once, tried = self._keys(key)
        with unavailable_as_store_error():
            await self._redis.pipelined().pipeline_packed(
                encode(("SET", once, "done", "PX", px(ttl))) + encode(("DEL", tried)), 2, key=once)

    async def renew(self, keys: list[str], lease: float) -> set[str]:
        if not keys:
            return set()
        pipelined, ms = self._redis.pipelined(), px(lease)
        with unavailable_as_store_error():
            # One write for every key (each its own slot: on a Cluster, per master).
            replies = await pipelined.pipeline_many(
                [(once, encode(("EVALSHA", RENEW_SHA, 1, once, self._held, ms)), 1)
                 for once in (self._keys(key)[0] for key in keys)])
            renewed = set()
            for key, (reply,) in zip(keys, replies, strict=True):
                if isinstance(reply, redis.exceptions.NoScriptError):  # a restarted Redis
                    reply = await pipelined.evalsha(RENEW_SHA, _RENEW, [self._keys(key)[0]],
                                               [self._held, ms])
                if isinstance(reply, Exception):
                    raise reply
                if reply == 1:
                    renewed.add(key)
        return renewed
