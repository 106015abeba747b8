"""The Lua scripts of ``RedisSessionStore`` (``redis.py``), apart so that module stays readable.

Each script names only keys of one hash tag (the ``{P}`` indexes, or one claim key), so each runs
within one slot on Redis Cluster.
"""

from __future__ import annotations

import hashlib

# KEYS: live, created, the principal's owned zset, principal-of hash. ARGV: sid, expiry ms,
# created_at, max, max per principal (-1: no cap). Atomic, so concurrent creates cannot overshoot
# a cap; O(log n) whatever the number of live sessions: the caps are two ZCARDs (the indexes are
# kept exact by ``_refresh_index`` just before, which drops the entries of vanished sessions).
CAPS = """
local max = tonumber(ARGV[4])
if max >= 0 and redis.call('ZCARD', KEYS[1]) >= max then return -1 end
local maxpp = tonumber(ARGV[5])
if maxpp >= 0 and redis.call('ZCARD', KEYS[3]) >= maxpp then return -2 end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
redis.call('ZADD', KEYS[3], ARGV[2], ARGV[1])
redis.call('HSET', KEYS[4], ARGV[1], KEYS[3])
return 1
"""

# Claims change only in their owner's hands (compare-and-set / compare-and-delete).
REFRESH = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
"""
RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""

REFRESH_SHA = hashlib.sha1(REFRESH.encode()).hexdigest()
RELEASE_SHA = hashlib.sha1(RELEASE.encode()).hexdigest()
