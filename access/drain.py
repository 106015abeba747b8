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

import json
import logging
import os
import socket
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from django.db import connection

from mcp_protocol.auth.audit import AuditEntry
from mcp_protocol.stores.connection import DEFAULT_URL, RedisConnector

from .audit import _write
from .spool import DRAIN_ALIVE_SECONDS, GROUP, SpoolKeys

logger = logging.getLogger("access.drain")

# KEYS: stream. ARGV: group. Deletes the entries older than both the group's oldest pending entry
# and (nothing pending) the one after its last delivered entry: acknowledged by every drain.
# One script, so no drain reads or acknowledges between the two looks.
TRIM = """
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


def decode(fields: dict[str, str], vendor: str) -> tuple[str, AuditEntry]:
    """A stream entry → (spool id, entry). The arguments' JSON text is kept as is (SQLite stores
    it); only other backends, which bind the value, parse it."""
    (spool_id, when, principal, principal_id, session, revision, method, name, outcome, error,
     duration_ms) = json.loads(fields["h"])
    text = fields.get("a") or None
    arguments = json.loads(text) if text is not None and vendor != "sqlite" else None
    return spool_id, AuditEntry(float(when), principal, principal_id, session, revision, method, name,
                                arguments, outcome, error, float(duration_ms), text)


@dataclass
class Totals:
    written: int = 0  # entries handed to the database (a redelivered one is skipped there)
    claimed: int = 0  # of which taken over from another drain
    malformed: int = 0  # acknowledged without a row: not an entry of ours
    batches: int = 0
    cpu_seconds: float = 0.0  # this process's CPU in _land (decode, insert, ack)


class Drain:
    def __init__(self, *, url: str = DEFAULT_URL, prefix: str = "mcp", mode: str = "standalone",
                 sentinels: Sequence[str] | str = (), sentinel_master: str = "mymaster",
                 sentinel_password: str | None = None, batch: int = 1000, block: float = 2.0,
                 claim_after: float = 60.0, linger: float = 0.25, consumer: str | None = None,
                 after_commit: Callable[[int], None] | None = None, **options: Any) -> None:
        self.keys = SpoolKeys(prefix)
        # A read blocks up to ``block`` s: the socket must outwait it.
        self.redis = RedisConnector.from_options(
            url, mode=mode, sentinels=sentinels, sentinel_master=sentinel_master,
            sentinel_password=sentinel_password, socket_timeout=block + 5.0).sync_client()
        self.batch, self.block, self.claim_after = int(batch), float(block), float(claim_after)
        # After a short batch, wait this long for more before the next round: a round costs a
        # commit (about 1 ms of CPU on SQLite) and five Redis commands whatever its size, so
        # rounds of a few entries each, as a drain that loops at once reads under load, cost
        # several times the CPU per row of full ones. Rows reach the table at most this much later.
        self.linger = float(linger)
        self.consumer = consumer or f"{socket.gethostname()}-{os.getpid()}"
        self.after_commit = after_commit  # fault tests: between the commit and the ack
        self.totals = Totals()
        self._claim_from = "0-0"
        self._trim = self.redis.register_script(TRIM)  # EVALSHA, EVAL after a Redis restart
        self._forget = self.redis.register_script(FORGET)
        self._forgot_at = 0.0

    def ensure_group(self) -> None:
        try:
            self.redis.xgroup_create(self.keys.stream, GROUP, id="0", mkstream=True)
        except Exception as exc:  # BUSYGROUP: another drain made it
            if "BUSYGROUP" not in str(exc):
                raise
        # Named up front (a read that finds nothing makes no consumer): XINFO CONSUMERS lists it.
        self.redis.xgroup_createconsumer(self.keys.stream, GROUP, self.consumer)

    def heartbeat(self) -> None:
        self.redis.set(self.keys.alive, self.consumer, ex=DRAIN_ALIVE_SECONDS)

    def forget_ended_drains(self, idle: float = FORGET_AFTER) -> int:
        """Drop the consumers of drains that ended (their names stay in the group otherwise)."""
        self._forgot_at = time.monotonic()
        return int(self._forget(keys=[self.keys.stream], args=[GROUP, self.consumer, int(idle * 1000)]))

    def step(self, *, block: bool = True) -> int:
        """One round: claim, read, write, acknowledge, trim. Returns the entries handled."""
        self.heartbeat()
        if time.monotonic() - self._forgot_at >= FORGET_EVERY:
            self.forget_ended_drains()
        handled = self._claim()
        if handled < self.batch:
            read = self.redis.xreadgroup(GROUP, self.consumer, {self.keys.stream: ">"}, count=self.batch,
                                         block=int(self.block * 1000) if block and not handled else None)
            for _, messages in read or []:
                handled += self._land(messages)
        if handled:
            self._trim(keys=[self.keys.stream], args=[GROUP])
        return handled

    def _claim(self) -> int:
        """Entries another drain read ``claim_after`` seconds ago or more and never acknowledged.
        ``XAUTOCLAIM`` scans the pending list from a cursor; a full pass ends at ``0-0``."""
        reply = self.redis.xautoclaim(self.keys.stream, GROUP, self.consumer,
                                      min_idle_time=int(self.claim_after * 1000),
                                      start_id=self._claim_from, count=self.batch)
        self._claim_from, messages = reply[0], reply[1]
        messages = [m for m in messages if m[1] is not None]  # trimmed under it (cannot happen to ours)
        if not messages:
            return 0
        self.totals.claimed += len(messages)
        return self._land(messages)

    def _land(self, messages: list[tuple[str, dict[str, str]]]) -> int:
        if not messages:
            return 0
        started = time.process_time()
        vendor = connection.vendor
        ids, entries, spool_ids = [], [], []
        for message_id, fields in messages:
            ids.append(message_id)
            try:
                spool_id, entry = decode(fields, vendor)
            except (KeyError, ValueError, TypeError):
                self.totals.malformed += 1
                logger.error("audit spool entry %s is not an audit entry: acknowledged, skipped",
                             message_id)
                continue
            spool_ids.append(spool_id)
            entries.append(entry)
        if entries:
            _write(entries, spool_ids)  # one transaction, committed here
        if self.after_commit is not None:
            self.after_commit(len(entries))
        self.redis.xack(self.keys.stream, GROUP, *ids)
        self.totals.written += len(entries)
        self.totals.batches += 1
        self.totals.cpu_seconds += time.process_time() - started
        return len(messages)

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
