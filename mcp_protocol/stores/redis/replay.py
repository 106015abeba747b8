"""The Redis event store's replay: the script that answers a ``listen`` from a Last-Event-ID
([L] basic/transports.mdx "Resumability and Redelivery") within the exact retained window, and
the mapping between event sequence numbers and Redis entry ids (``events.py`` explains the
ids and the window).
"""

from __future__ import annotations

import hashlib

from ...store_errors import UnknownEvent
from ..events import Event, make_event_id, stored_event
from .tail import SEQ_BASE, entry_of

# KEYS: stream. ARGV: after entry id or '', max_events, ttl ms.
# Returns {-1} if ``after`` is outside the retained window, else {1, newest id, id, payload, ...}.
REPLAY = """
local t = redis.call('TIME')
local minms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) - tonumber(ARGV[3])
local max = tonumber(ARGV[2])
local top = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
local newest = '0-0'
if #top > 0 then newest = top[1][1] end
local function ms(id) return tonumber(string.match(id, '^(%d+)')) end
local out = {1, newest}
if ARGV[1] == '' then
  local entries = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', max)
  for i = #entries, 1, -1 do
    if ms(entries[i][1]) >= minms then
      table.insert(out, entries[i][1]); table.insert(out, entries[i][2][2])
    end
  end
  return out
end
local entries = redis.call('XRANGE', KEYS[1], ARGV[1], '+', 'COUNT', max + 1)
if #entries == 0 or entries[1][1] ~= ARGV[1] or #entries > max or ms(ARGV[1]) < minms then
  return {-1}
end
for i = 2, #entries do
  table.insert(out, entries[i][1]); table.insert(out, entries[i][2][2])
end
return out
"""


def entry_id_of(seq: int) -> str:
    ms = seq // SEQ_BASE
    if ms >= 2**64:  # not an id Redis could have made (it would reject it as a stream id)
        raise UnknownEvent(f"Event sequence {seq} is out of range")
    return entry_of(seq)


def event_of(stream_id: str, seq: int, payload: str) -> Event:
    return stored_event(make_event_id(stream_id, seq), payload)


REPLAY_SHA = hashlib.sha1(REPLAY.encode()).hexdigest()
