"""``RedisSpoolSink``: the audit queue's ``AuditSink`` for a fleet. The serving process appends each
batch of prepared (redacted, capped) entries to a Redis stream in one round trip; ``drain.py``
(``manage.py drain_audit``) moves them into ``AuditRecord`` from another process.

Why: with ``DatabaseAuditSink`` the insert runs in a thread of the serving process and takes the
GIL from the event loop (~25 µs of its CPU per audited call, measured in
bench/results/2026-11-24-1629-audit-spool-session11.md); here the serving process only encodes an
entry and appends it.

The stream ``{P}:audit:spool`` holds one entry per audited call, two fields: ``h``, the JSON array
of ``HEAD`` and ``a``, the arguments' JSON text exactly as capping measured it ("" for none).
``HEAD``'s first value is the entry's spool id, unique per sink instance and counter: the
``AuditRecord.spool_id`` that makes every redelivery (a drain killed between its commit and its
ack, this sink's retry of an append whose reply was lost) land once.

Bounded: the append script refuses entries while the stream holds ``max_entries`` (what the
drains have not yet written and trimmed); those are dropped, counted (``mcp_audit_dropped_total
{reason="sink_full"}``) and logged, as the in-process queue does when it is full: the newest
are lost, never what waits. A drain refreshes ``{P}:audit:drain`` (expires after
``DRAIN_ALIVE_SECONDS``); the append script answers whether it exists, so a worker logs a warning
when entries wait and nothing drains.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import logging
import secrets
import time
from typing import Any, NamedTuple

import redis

from mcp_protocol.auth.audit import AuditEntry, AuditSink, Row, prepare_arguments
from mcp_protocol.redis_client.connection import RedisConnector, unavailable_as_store_error
from mcp_protocol.redis_client.options import RedisOptions
from mcp_protocol.redis_client.resp import bulk
from mcp_protocol.redis_client.topology import check_prefix

logger = logging.getLogger("access.spool")

GROUP = "drain"  # the drains' consumer group: the stream is theirs (trimming assumes it)
DRAIN_ALIVE_SECONDS = 30
WARN_EVERY = 60.0
DEFAULT_MAX_ENTRIES = 100_000
# What HEAD holds, in order (the drain decodes by position).
HEAD = ("spool_id", "time", "principal", "principal_id", "session", "revision", "method", "name",
        "outcome", "error", "duration_ms", "server")

# KEYS: stream, drain heartbeat. ARGV: cap, then h, a per entry. → {dropped, length, drain alive}.
# The cap is checked against the stream's length once: a batch may pass it by its own size.
APPEND = """
local room = tonumber(ARGV[1]) - redis.call('XLEN', KEYS[1])
local n = (#ARGV - 1) / 2
local added = 0
while added < n and added < room do
  redis.call('XADD', KEYS[1], '*', 'h', ARGV[2 + 2 * added], 'a', ARGV[3 + 2 * added])
  added = added + 1
end
return {n - added, redis.call('XLEN', KEYS[1]), redis.call('EXISTS', KEYS[2])}
"""
APPEND_SHA = hashlib.sha1(APPEND.encode()).hexdigest()

_encode = json.JSONEncoder(ensure_ascii=False, default=str).encode
_text = json.encoder.encode_basestring  # C: str → its JSON literal; TypeError for anything else


def _head(spool_id: str, e: AuditEntry) -> str:
    """``HEAD`` as JSON, each string through the C encoder's string literal: encoding the tuple
    with ``JSONEncoder.encode`` builds an encoder per call (3.6 µs an entry in the served profile,
    the spool's largest cost in the serving process; this is ~1 µs). The sink writes the same
    text, with the part from ``principal`` to ``name`` cached."""
    return (f'["{spool_id}",{float(e.time)!r},'
            f"{_middle(e.principal, e.principal_id, e.session, e.revision, e.method, e.name)},"
            f'{_text(e.outcome)},{_text(e.error)},{float(e.duration_ms)!r},{_text(e.server)}]')


def _middle(principal: str, principal_id: str | None, session: str | None, revision: str, method: str,
            name: str) -> str:
    """``HEAD``'s JSON from ``principal`` to ``name`` (between ``time`` and ``outcome``)."""
    return (f"{_text(principal)},{_maybe(principal_id)},{_maybe(session)},{_text(revision)},"
            f"{_text(method)},{_text(name)}")


def _pair(head: str, text: str) -> bytes:
    """An entry's ``h`` and ``a`` as the two RESP bulk strings of the append command's ARGV."""
    try:
        h, a = head.encode(), text.encode()
    except UnicodeEncodeError:
        h, a = _utf8(head), _utf8(text)
    return b"$%d\r\n%b\r\n$%d\r\n%b\r\n" % (len(h), h, len(a), a)


def _utf8(text: str) -> bytes:
    """UTF-8 of a JSON text. A lone surrogate (JSON's "\\ud800" decodes to one) has no UTF-8: it is
    written back as that same escape, so the text stays valid JSON of the same value and the
    batch is not lost (RESP's encoding would raise for it, and drop all of it)."""
    try:
        return text.encode()
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace")


class Packed(NamedTuple):
    """``encode_rows``: the ARGV of the append script after the cap, in RESP, and its entries."""

    argv: bytes
    entries: int


OK = '"ok",""'  # outcome and error of a call that succeeded
MIDDLES = 4096  # cached middles at most (sessions and tools seen lately); cleared when full


def _maybe(value: str | None) -> str:
    return "null" if value is None else _text(value)


class SpoolKeys:
    def __init__(self, prefix: str) -> None:
        tag = "{" + check_prefix(prefix) + "}"  # one hash tag: both keys in one Cluster slot
        self.prefix = prefix
        self.stream = f"{tag}:audit:spool"
        self.alive = f"{tag}:audit:drain"


class RedisSpoolSink(AuditSink):
    def __init__(self, *, prefix: str = "mcp", max_entries: int = DEFAULT_MAX_ENTRIES,
                 redis: RedisOptions | None = None, **options: Any) -> None:
        connection = RedisOptions.take(redis, options)  # flat connection keys too (url=, ...)
        super().__init__(**options)
        self.keys = SpoolKeys(prefix)
        self.max_entries = int(max_entries)
        self._redis = RedisConnector(connection)
        # Spool ids: this instance's random tag and a counter (unique without a round trip).
        self._tag = secrets.token_hex(6)
        self._ids = itertools.count()
        self._warned_at = 0.0
        # HEAD's JSON from principal to name, per those values (``encode``). Used by the queue's
        # thread; a second one at once (a close during a flush) at worst misses.
        self._middles: dict[tuple[Any, ...], str] = {}

    def encode(self, entries: list[AuditEntry]) -> list[str]:
        """The append script's ARGV after the cap: ``h``, ``a`` per entry."""
        out: list[str] = []
        for e in entries:
            who = (e.principal, e.principal_id, e.session, e.revision, e.method, e.name)
            out += (self._head_of(e.time, who, e.outcome, e.error, e.duration_ms, e.server),
                    e.arguments_json or "")
        return out

    def encode_rows(self, rows: list[Row], max_bytes: int) -> Packed:
        """The queue's rows as the append script's ARGV after the cap, already in RESP (bulk
        strings): built here, in the queue's thread with the redaction, not on the event loop,
        and with no ``AuditEntry`` per row. ``write`` sends it as it is (the tests hold its heads
        and ``encode``'s to ``_head``)."""
        parts: list[bytes] = []
        append, head_of = parts.append, self._head_of
        for row in rows:
            text = prepare_arguments(row[7], max_bytes) or ""
            append(_pair(head_of(row[0], row[1:7], row[8], row[9], row[10], row[11]), text))
        return Packed(b"".join(parts), len(rows))

    def _head_of(self, when: float, who: tuple[Any, ...], outcome: str, error: str,
                 duration_ms: float, server: str = "") -> str:
        """One entry's ``h``, what ``_head`` writes for it under a new spool id. ``who`` is
        ``HEAD``'s fields from ``principal`` to ``name``: they repeat from call to call (a session's
        calls of one tool), so their JSON is kept, not encoded again. Called from the queue's
        thread."""
        spool_id = f"{self._tag}-{next(self._ids)}"
        middles = self._middles
        try:
            middle = middles.get(who)
            if middle is None:
                middle = _middle(*who)
                if len(middles) >= MIDDLES:
                    middles.clear()
                middles[who] = middle
            tail = OK if outcome == "ok" and error == "" else f"{_text(outcome)},{_text(error)}"
            end = ',""]' if server == "" else f",{_text(server)}]"
            return f'["{spool_id}",{float(when)!r},{middle},{tail},{float(duration_ms)!r}{end}'
        except TypeError:  # a field of another type than the guard records: the general path
            return _encode((spool_id, when, *who, outcome, error, duration_ms, server))

    async def write(self, batch: Any) -> int:
        """Append ``batch`` (``encode_rows``'s ``Packed``, or ``encode``'s list): one round trip,
        retried once on a fresh connection (spool ids make a repeated append land once)."""
        stream = self.keys.stream
        if not isinstance(batch, Packed):  # ``encode``'s h, a, h, a, ...: the same command
            batch = Packed(b"".join(map(_pair, batch[0::2], batch[1::2])), len(batch) // 2)
        with unavailable_as_store_error():
            pipelined = self._redis.pipelined()
            (reply,) = await pipelined.pipeline_packed(self._command("EVALSHA", APPEND_SHA, batch), 1,
                                                  key=stream, retry=True)
            if isinstance(reply, redis.exceptions.NoScriptError):  # a restarted Redis
                (reply,) = await pipelined.pipeline_packed(self._command("EVAL", APPEND, batch), 1,
                                                      key=stream, retry=True)
        if isinstance(reply, Exception):
            raise reply
        dropped, length, alive = (int(v) for v in reply)
        if (dropped or not alive) and time.monotonic() - self._warned_at >= WARN_EVERY:
            self._warned_at = time.monotonic()
            if dropped:
                logger.warning("audit spool %s full (%d entries): %d entries dropped; is "
                               "`manage.py drain_audit` running?", self.keys.stream, length, dropped)
            else:
                logger.warning("audit spool %s holds %d entries and no `manage.py drain_audit` has "
                               "been seen for %d s", self.keys.stream, length, DRAIN_ALIVE_SECONDS)
        return dropped

    def _command(self, verb: str, script: str, batch: Packed) -> bytes:
        """``verb script 2 stream alive cap`` and the packed ARGV, as one RESP command."""
        head = (verb, script, 2, self.keys.stream, self.keys.alive, self.max_entries)
        return b"*%d\r\n%b%b" % (len(head) + 2 * batch.entries, b"".join([bulk(a) for a in head]),
                                 batch.argv)

    async def status(self) -> dict[str, float]:
        """Gauges for /metrics: the stream's length (waiting + being written), entries read by a
        drain and not yet acknowledged, and whether a drain was seen lately."""
        with unavailable_as_store_error():
            length, pending, alive = await self._redis.pipelined().pipeline([
                ("XLEN", self.keys.stream), ("XPENDING", self.keys.stream, GROUP),
                ("EXISTS", self.keys.alive)])
        if isinstance(length, Exception) or isinstance(alive, Exception):
            raise length if isinstance(length, Exception) else alive  # type: ignore[misc]
        held = 0 if isinstance(pending, Exception) else int(pending[0])  # NOGROUP: no drain yet
        return {"spool_entries": float(length), "spool_pending": float(held),
                "spool_drain_alive": float(alive)}

    async def close(self) -> None:
        await self._redis.close()
