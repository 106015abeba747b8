"""The task store's transitions as Lua scripts (``RedisTaskStore`` in ``tasks.py`` runs them):
each is one atomic step over a task, its inputs and answers, and the indexes, all under the one
hash tag ``{P:tasks}`` (the key layout is drawn in ``tasks.py``'s docstring). The scripts never
decode JSON (Lua's cjson turns ``[]`` into ``{}``): results, errors and requests pass through as
strings.
"""

from __future__ import annotations

# KEYS: task, running, all, by-principal, the principal's open tasks. ARGV: id, created ms,
# expire-at ms (0: never), lease ms, the cap (-1: none), now ms, the task's expiry as an open-set
# score, then field/value pairs. An existing id is refused (0); a principal at its cap of
# unfinished, unexpired tasks too (-1): counted and checked in this one step.
CREATE = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('ZREMRANGEBYSCORE', KEYS[5], '-inf', ARGV[6])
if tonumber(ARGV[5]) >= 0 and redis.call('ZCARD', KEYS[5]) >= tonumber(ARGV[5]) then return -1 end
redis.call('ZADD', KEYS[5], ARGV[7], ARGV[1])
redis.call('HSET', KEYS[1], unpack(ARGV, 8))
if tonumber(ARGV[3]) > 0 then redis.call('PEXPIREAT', KEYS[1], ARGV[3]) end
redis.call('ZADD', KEYS[2], ARGV[4], ARGV[1])
redis.call('ZADD', KEYS[3], ARGV[2], ARGV[1])
redis.call('ZADD', KEYS[4], ARGV[2], ARGV[1])
return 1
"""
# KEYS: task, running, answers. ARGV: id, owner, now, lease.
CLAIM = """
local f = redis.call('HMGET', KEYS[1], 'status', 'owner', 'lease')
if f[1] ~= 'working' then return false end
if f[2] and f[2] ~= '' and f[2] ~= ARGV[2] and tonumber(f[3] or '0') > tonumber(ARGV[3]) then
  return false
end
local found = redis.call('HGETALL', KEYS[1])
redis.call('HSET', KEYS[1], 'owner', ARGV[2], 'lease', ARGV[4])
redis.call('ZADD', KEYS[2], ARGV[4], ARGV[1])
return {found, redis.call('HGETALL', KEYS[3])}
"""
# KEYS: running, then the tasks. ARGV: owner, lease, then the tasks' ids (ARGV[i + 1] is KEYS[i]'s).
# One script for a batch: a worker running 5,000 tasks renews them in 10 round trips, not 5,000.
RENEW = """
local renewed = {}
for i = 2, #KEYS do
  local f = redis.call('HMGET', KEYS[i], 'status', 'owner')
  if f[1] == 'working' and f[2] == ARGV[1] then
    redis.call('HSET', KEYS[i], 'lease', ARGV[2])
    redis.call('ZADD', KEYS[1], ARGV[2], ARGV[i + 1])
    renewed[#renewed + 1] = ARGV[i + 1]
  end
end
return renewed
"""
# KEYS: task, running. ARGV: id, owner, now. Free and lapsed at once: the next claim wins it.
RELEASE = """
local f = redis.call('HMGET', KEYS[1], 'status', 'owner')
if f[1] ~= 'working' or f[2] ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], 'owner', '', 'lease', ARGV[3])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
return 1
"""
# KEYS: task, running, inputs. ARGV: id, owner, now, message, then key/request pairs.
PARK = """
local f = redis.call('HMGET', KEYS[1], 'status', 'owner')
if f[1] ~= 'working' or f[2] ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], 'status', 'input_required', 'message', ARGV[4], 'owner', '',
           'lease', '0', 'updated', ARGV[3])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('DEL', KEYS[3])
if #ARGV > 4 then
  redis.call('HSET', KEYS[3], unpack(ARGV, 5))
  local at = redis.call('PEXPIRETIME', KEYS[1])
  if at > 0 then redis.call('PEXPIREAT', KEYS[3], at) end
end
return 1
"""
# KEYS: task. ARGV: owner, message, now.
NOTE = """
local f = redis.call('HMGET', KEYS[1], 'status', 'owner')
if f[1] ~= 'working' or f[2] ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'message', ARGV[2], 'updated', ARGV[3])
return 1
"""
# KEYS: task, running, inputs, answers. ARGV: id, now, then key/answer pairs.
ANSWER = """
if redis.call('HGET', KEYS[1], 'status') ~= 'input_required' then return 'ignored' end
local taken = 0
for i = 3, #ARGV, 2 do
  if redis.call('HDEL', KEYS[3], ARGV[i]) == 1 then
    redis.call('HSET', KEYS[4], ARGV[i], ARGV[i + 1])
    taken = taken + 1
  end
end
if taken == 0 then return 'ignored' end
local at = redis.call('PEXPIRETIME', KEYS[1])
if at > 0 then redis.call('PEXPIREAT', KEYS[4], at) end
redis.call('HSET', KEYS[1], 'updated', ARGV[2])
if redis.call('EXISTS', KEYS[3]) == 1 then return 'pending' end
redis.call('HSET', KEYS[1], 'status', 'working', 'message', '', 'owner', '', 'lease', ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
return 'ready'
"""
# KEYS: task, running, inputs, the principal's open tasks, its finished tasks, the finishing
# order counter, all, by-principal. ARGV: id, owner ('' : only an unowned task), now, status,
# the bound on finished tasks (-1: none), the key prefix of a task's keys ("{P:tasks}:"), then
# field/value pairs (message, result, error). A task dropped past the bound has its keys built
# here from the prefix: they share the one hash tag, so the slot is the same as every key's.
FINISH = """
local f = redis.call('HMGET', KEYS[1], 'status', 'owner')
if not f[1] or f[1] == 'completed' or f[1] == 'failed' or f[1] == 'cancelled' then return 0 end
if (f[2] or '') ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], 'status', ARGV[4], 'owner', '', 'lease', '0', 'updated', ARGV[3],
           unpack(ARGV, 7))
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[4], ARGV[1])
redis.call('DEL', KEYS[3])
local cap = tonumber(ARGV[5])
if cap >= 0 then
  redis.call('ZADD', KEYS[5], redis.call('INCR', KEYS[6]), ARGV[1])
  local at = redis.call('PEXPIRETIME', KEYS[1])
  if at > 0 and redis.call('PEXPIRETIME', KEYS[5]) < at then redis.call('PEXPIREAT', KEYS[5], at) end
  if at < 0 then redis.call('PERSIST', KEYS[5]) end
  local excess = redis.call('ZCARD', KEYS[5]) - cap
  if excess > 0 then
    for i, old in ipairs(redis.call('ZPOPMIN', KEYS[5], excess)) do
      if i % 2 == 1 then
        redis.call('DEL', ARGV[6] .. 't:' .. old, ARGV[6] .. 'in:' .. old, ARGV[6] .. 'ans:' .. old)
        redis.call('ZREM', KEYS[7], old)
        redis.call('ZREM', KEYS[8], old)
      end
    end
  end
end
return 1
"""

# KEYS: task, inputs, answers. One consistent read of the three.
READ = """
return {redis.call('HGETALL', KEYS[1]), redis.call('HGETALL', KEYS[2]), redis.call('HGETALL', KEYS[3])}
"""
