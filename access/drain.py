"""The drain of the Redis audit spool (``spool.py``): entries from the stream into ``AuditRecord``,
each exactly once, from a process of its own (``manage.py drain_audit``).

A step: refresh the heartbeat the workers look for; take over entries another drain read and
never acknowledged for ``claim_after`` seconds (``XAUTOCLAIM``: it died); read new entries as a
consumer of the group (``XREADGROUP``); write them in one transaction through ``audit._write``
with their spool ids; acknowledge them only after the commit (``XACK``); trim what every drain has
acknowledged (``TRIM``). A drain killed between its commit and its ack leaves its entries pending:
the next claim writes them again and the unique spool id skips each one already stored. Several
drains may run (consumers of one group: each entry is read by one of them).
"""

from __future__ import annotations

import gc
import logging
import math
import os
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from django.db import ProgrammingError, connection

from mcp_protocol.auth.audit import AuditEntry
from mcp_protocol.options import refuse_leftover
from mcp_protocol.redis_client.connection import RedisConnector
from mcp_protocol.redis_client.options import RedisOptions

from .audit import _arguments_adapter, _insert, _write, sqlite_time
from .spool import DRAIN_ALIVE_SECONDS, GROUP, SpoolKeys
from .spool_entries import Message, decode, sqlite_rows

logger = logging.getLogger("access.drain")

# KEYS: stream. ARGV: group, then the ids to acknowledge (none: only trim). Acknowledges them,
# then deletes the entries older than both the group's oldest pending entry and (nothing pending)
# the one after its last delivered entry: acknowledged by every drain. One script, so no drain
# reads or acknowledges between the two looks, and one round trip a batch for both.
ACK_TRIM = """
for i = 2, #ARGV, 1000 do  -- unpack's stack holds a few thousand values
  redis.call('XACK', KEYS[1], ARGV[1], unpack(ARGV, i, math.min(i + 999, #ARGV)))
end
local groups = redis.pcall('XINFO', 'GROUPS', KEYS[1])
if groups.err then return 0 end
local last = nil
for _, g in ipairs(groups) do
  local name, id = nil, nil
  for i = 1, #g, 2 do
    if g[i] == 'name' then name = g[i + 1] elseif g[i] == 'last-delivered-id' then id = g[i + 1] end
  end
  if name == ARGV[1] then last = id end
end
if not last then return 0 end
local pending = redis.call('XPENDING', KEYS[1], ARGV[1])
local minid
if tonumber(pending[1]) > 0 then
  minid = pending[2]
else
  local ms, seq = string.match(last, '^(%d+)-(%d+)$')
  minid = ms .. '-' .. tostring(tonumber(seq) + 1)
end
return redis.call('XTRIM', KEYS[1], 'MINID', minid)
"""

# KEYS: stream. ARGV: group, this consumer, idle ms. Forgets the consumers (dead drains: each run
# is host-pid) idle that long with nothing pending, in one script: one holding entries is kept,
# and none can read between the look and the delete.
FORGET = """
local gone = 0
for _, c in ipairs(redis.call('XINFO', 'CONSUMERS', KEYS[1], ARGV[1])) do
  local name, pending, idle = nil, 0, 0
  for i = 1, #c, 2 do
    if c[i] == 'name' then name = c[i + 1]
    elseif c[i] == 'pending' then pending = tonumber(c[i + 1])
    elseif c[i] == 'idle' then idle = tonumber(c[i + 1]) end
  end
  if name ~= ARGV[2] and pending == 0 and idle >= tonumber(ARGV[3]) then
    redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], name)
    gone = gone + 1
  end
end
return gone
"""
FORGET_AFTER = 24 * 3600.0  # a consumer this idle, with nothing pending, is a drain that ended
FORGET_EVERY = 600.0


PHASES = ("read", "decode", "write", "ack")
# Entries per read and transaction. A full batch is followed at once by another read, which finds
# only what came during the write: at 5,000 calls/s, batches of 1,000 alternated with short ones
# of a few dozen, each paying a commit and four round trips. 5,000 is more than a linger gathers
# there: every round reads what waited (~1.5 MB of rows at most).
BATCH = 5000


@dataclass
class Totals:
    written: int = 0  # entries handed to the database (a redelivered one is skipped there)
    claimed: int = 0  # of which taken over from another drain
    malformed: int = 0  # acknowledged without a row: not an entry of ours
    batches: int = 0
    cpu_seconds: float = 0.0  # this process's CPU in read, decode, write and ack
    # The same CPU by phase (bench/bench_drain.py prints it): XREADGROUP/XAUTOCLAIM and their
    # replies; entries to rows; INSERTs and the commit; XACK and the trim.
    phases: dict[str, float] = field(default_factory=lambda: dict.fromkeys(PHASES, 0.0))

    def add(self, phase: str, since: float) -> float:
        now = time.process_time()
        self.phases[phase] += now - since
        self.cpu_seconds += now - since
        return now


class Drain:
    strict_options = True  # a misspelt option is refused (mcp_protocol/options.py)

    def __init__(self, *, prefix: str = "mcp", batch: int = BATCH, block: float = 2.0,
                 claim_after: float = 60.0, linger: float = 0.25, consumer: str | None = None,
                 after_commit: Callable[[int], None] | None = None, redis: RedisOptions | None = None,
                 **options: Any) -> None:
        connection = RedisOptions.take(redis, options)  # flat connection keys too (url=, ...)
        refuse_leftover(self, options)
        self.keys = SpoolKeys(prefix)
        # A read blocks up to ``block`` s: the socket must outwait it.
        self.redis = RedisConnector(replace(connection, socket_timeout=block + 5.0)).sync_client()
        # This client is the drain's own (its connector's): the stream replies are taken as hiredis
        # parsed them, lists, without redis-py's callbacks that make a dict of each entry's fields
        # (1.2 µs a row). A Cluster client has none of its own (its nodes' clients parse, and
        # ``fields_of`` reads their dicts).
        callbacks = getattr(self.redis, "response_callbacks", None)
        if callbacks is not None:
            for command in ("XREADGROUP", "XAUTOCLAIM"):
                callbacks.pop(command, None)
        self.batch, self.block, self.claim_after = int(batch), float(block), float(claim_after)
        # After a short batch, wait this long for more before the next round: a round costs a
        # commit (about 1 ms of CPU on SQLite) and four Redis commands whatever its size, so
        # rounds of a few entries each, as a drain that loops at once reads under load, cost
        # several times the CPU per row of full ones. Rows reach the table at most this much later.
        self.linger = float(linger)
        self.consumer = consumer or f"{socket.gethostname()}-{os.getpid()}"
        self.after_commit = after_commit  # fault tests: between the commit and the ack
        self.totals = Totals()
        self._claim_from = "0-0"
        self._ack_trim = self.redis.register_script(ACK_TRIM)  # EVALSHA, EVAL after a Redis restart
        self._forget = self.redis.register_script(FORGET)
        self._forgot_at = 0.0
        self._beat_at = -math.inf
        self._when: Callable[[float], str] | None = None  # SQLite's time text, its seconds cached

    def ensure_group(self) -> None:
        try:
            self.redis.xgroup_create(self.keys.stream, GROUP, id="0", mkstream=True)
        except Exception as exc:  # BUSYGROUP: another drain made it
            if "BUSYGROUP" not in str(exc):
                raise
        # Named up front (a read that finds nothing makes no consumer): XINFO CONSUMERS lists it.
        self.redis.xgroup_createconsumer(self.keys.stream, GROUP, self.consumer)

    def heartbeat(self) -> None:
        self._beat_at = time.monotonic()
        self.redis.set(self.keys.alive, self.consumer, ex=DRAIN_ALIVE_SECONDS)

    def forget_ended_drains(self, idle: float = FORGET_AFTER) -> int:
        """Drop the consumers of drains that ended (their names stay in the group otherwise)."""
        self._forgot_at = time.monotonic()
        return int(self._forget(keys=[self.keys.stream], args=[GROUP, self.consumer, int(idle * 1000)]))

    def step(self, *, block: bool = True) -> int:
        """One round: claim, read, write, acknowledge and trim. Returns the entries handled.

        Without the cyclic garbage collector: a batch makes a few containers per entry (the reply's
        lists, the parsed heads, the rows), all alive until it ends and none in a cycle, so every
        collection during it scanned them for nothing, and promoted them into the older
        generations whose collections scan the whole heap: 2.5 us a row at batches of 5,000
        (bench_drain.py, 13.1 -> 10.6). Refcounting frees them when the batch ends; a cycle made
        meanwhile waits for the first collection after it."""
        collecting = gc.isenabled()
        gc.disable()
        try:
            return self._step(block)
        finally:
            if collecting:
                gc.enable()

    def _step(self, block: bool) -> int:
        if time.monotonic() - self._beat_at >= 1.0:  # it lives 30 s: once a second is plenty
            self.heartbeat()
        if time.monotonic() - self._forgot_at >= FORGET_EVERY:
            self.forget_ended_drains()
        handled = self._claim()
        if handled < self.batch:
            started = time.process_time()
            reply = self.redis.execute_command(
                "XREADGROUP", "GROUP", GROUP, self.consumer, "COUNT", self.batch,
                *(("BLOCK", int(self.block * 1000)) if block and not handled else ()),
                "STREAMS", self.keys.stream, ">")
            self.totals.add("read", started)
            # RESP2: [[stream, entries]]; RESP3: {stream: entries}; nothing new: None.
            for messages in (reply.values() if isinstance(reply, dict) else [s[1] for s in reply or []]):
                handled += self._land(messages)
        return handled

    def _claim(self) -> int:
        """Entries another drain read ``claim_after`` seconds ago or more and never acknowledged.
        ``XAUTOCLAIM`` scans the pending list from a cursor; a full pass ends at ``0-0``."""
        started = time.process_time()
        reply = self.redis.execute_command(
            "XAUTOCLAIM", self.keys.stream, GROUP, self.consumer, int(self.claim_after * 1000),
            self._claim_from, "COUNT", self.batch)
        self.totals.add("read", started)
        self._claim_from, messages = reply[0], reply[1]
        messages = [m for m in messages if m[1] is not None]  # trimmed under it (cannot happen to ours)
        if not messages:
            return 0
        self.totals.claimed += len(messages)
        return self._land(messages)

    def _land(self, messages: list[Message]) -> int:
        """Write a batch in one transaction, then acknowledge it and trim."""
        if not messages:
            return 0
        started = time.process_time()
        vendor = connection.vendor
        ids = [m[0] for m in messages]
        if vendor == "sqlite":
            rows = self._sqlite_rows(messages)
            started = self.totals.add("decode", started)
            try:
                if rows:
                    _insert(rows, spooled=True)  # one transaction, committed here
            except (ProgrammingError, OverflowError):  # a value SQLite cannot bind: rolled back
                rows = None
            if rows is None:  # an entry not as the spool writes it: each checked alone
                rows = self._strict_rows(messages)
                if rows:
                    _insert(rows, spooled=True)
            written = len(rows)
        else:
            spool_ids, entries = self._entries(messages, vendor)
            started = self.totals.add("decode", started)
            if entries:
                _write(entries, spool_ids)  # one transaction, committed here
            written = len(entries)
        started = self.totals.add("write", started)
        if self.after_commit is not None:
            self.after_commit(written)
        self._ack_trim(keys=[self.keys.stream], args=[GROUP, *ids])
        self.totals.add("ack", started)
        self.totals.written += written
        self.totals.batches += 1
        return len(messages)

    def _sqlite_rows(self, messages: list[Message]) -> list[tuple[object, ...]] | None:
        if self._when is None:
            self._when = sqlite_time(connection.timezone)
        return sqlite_rows(messages, self._when)

    def _strict_rows(self, messages: list[Message]) -> list[tuple[object, ...]]:
        """The rows of the entries that are ours, each decoded and checked alone (``_entries``)."""
        when, arguments = self._when or sqlite_time(connection.timezone), _arguments_adapter()
        spool_ids, entries = self._entries(messages, "sqlite")
        return [(when(e.time), e.principal[:300], (e.principal_id or "")[:300], e.session or "",
                 e.revision, e.method, e.name[:500], arguments(e), e.outcome, e.error,
                 round(e.duration_ms, 3), e.server[:64], spool_id)
                for e, spool_id in zip(entries, spool_ids, strict=True)]

    def _entries(self, messages: list[Message], vendor: str) -> tuple[list[str], list[AuditEntry]]:
        """Each entry decoded strictly (``decode``); one that is not ours is logged and left out
        (it is acknowledged with the batch, never retried)."""
        spool_ids, entries = [], []
        for message_id, fields in messages:
            try:
                spool_id, entry = decode(fields, vendor)
            except (KeyError, ValueError, TypeError, AttributeError):
                self.totals.malformed += 1
                logger.error("audit spool entry %s is not an audit entry: acknowledged, skipped",
                             message_id)
                continue
            spool_ids.append(spool_id)
            entries.append(entry)
        return spool_ids, entries

    def run(self, *, once: bool = False, stop: Callable[[], bool] = lambda: False) -> Totals:
        """Drain until ``stop()`` says so; ``once``: until nothing is left to claim or read
        (entries a live drain holds for less than ``claim_after`` are left to it)."""
        self.ensure_group()
        while not stop():
            try:
                handled = self.step(block=not once)
            except Exception:
                if once:
                    raise
                logger.exception("audit drain step failed; retrying in %g s", self.block)
                connection.close()
                time.sleep(self.block)
                continue
            if once and not handled and self._claim_from == "0-0":
                break
            if not once and 0 < handled < self.batch and self.linger > 0:
                time.sleep(self.linger)
        return self.totals
