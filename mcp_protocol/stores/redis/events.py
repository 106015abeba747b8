"""Redis event store: one Redis Stream per (session, stream) for Last-Event-ID replay
([L] basic/transports.mdx "Resumability and Redelivery").

Owns ``RedisEventStore``. Keys (``P`` = prefix, ``b`` = the session's bucket)::

    {P:ev:b}:events:<sid>:<stream>   Redis Stream of {"m": message JSON[, "t": broadcast tag]};
                                     PX = ttl, slid by each append
    {P:ev:b}:streams:<sid>           set of the session's stream keys (delete_session); the
                                     standalone stream (``_GET``) is named, not always indexed

The claims (``claims``: stream claims, one-time jobs) have keys of their own (``claims.py``).

Buckets, for Redis Cluster: ``b`` is CRC32 of the session id modulo ``buckets`` (default 16; every
worker must use the same number: a change moves every log, and a Last-Event-ID issued before it
is then unknown). A session's stream keys and its index share the hash tag ``{P:ev:b}``, so an
append block is within one slot, and so are all the streams of one bucket: the live tail reads
them with one ``XREAD`` per bucket (``tail.py``), where a tag per session would need one
blocked connection per open stream. On one server the bucket changes nothing but the key names.

Event ids are ``<stream>.<seq>`` where ``seq`` encodes the Redis entry id ``<ms>-<n>`` as
``ms * 1_000_000 + n``: increasing within a stream, and (entry ids being time-based) never reused
even after a stream's log expired and was recreated, so an old Last-Event-ID cannot name a newer
event. No counter key is needed.

Retention: ``XADD MAXLEN ~`` bounds a stream's length cheaply but approximately and the key's
expiry (slid by each append) drops an idle stream after ``ttl``; entries older than ``ttl`` in a
stream still being appended to stay in Redis until MAXLEN trims them (at most ``max_events``), so
the replay script applies the exact window (the newest ``max_events`` entries, none older than
``ttl``): an id outside it raises ``UnknownEvent`` even if Redis still holds it.

``listen`` replays with one script that also returns the newest entry id, then follows the live
tail from that id through the process's shared readers (``tail.py``: one ``XREAD BLOCK``
over many streams, not a connection per listener): an append lands either at or before that id
(replayed) or after it (read live), never in between and never twice.

The hot-path commands (append, replay) go over the loop's pipelined connection
(``redis_client.pipelined``; ``redis_client.cluster`` on Redis Cluster). An append is one
MULTI/EXEC block in one write (XADD per event, PEXPIRE, SADD; atomic, so never a stream left
without its expiry; all its keys under the bucket's tag); ``append_many`` puts several events of a
stream in one block (a POST stream's response and its end marker) and ``broadcast`` pipelines one
block per session (to standalone streams: one MULTI/EXEC of XADD and PEXPIRE for up to
``SESSIONS_PER_BLOCK`` sessions of one bucket; no index entry), ``BROADCAST_BATCH`` sessions per
write (on a Cluster: per master, the masters written at once).
"""

from __future__ import annotations

import asyncio
import json
import time
import weakref
import zlib
from collections.abc import AsyncIterator
from typing import Any

import redis.exceptions

from ...redis_client.connection import (
    UNAVAILABLE,
    RedisConnector,
    px,
    unavailable_as_store_error,
)
from ...redis_client.options import RedisOptions
from ...redis_client.resp import bulk, encode
from ...redis_client.topology import check_prefix
from ...store_errors import StoreUnavailable, UnknownEvent
from ..events import STANDALONE_STREAM, Event, EventStore, make_event_id, parse_event_id
from .claims import RedisClaimStore
from .replay import REPLAY, REPLAY_SHA, entry_id_of, event_of
from .tail import Tail, seq_of

BROADCAST_BATCH = 500
SESSIONS_PER_BLOCK = 100  # standalone-stream appends of one bucket per MULTI/EXEC (broadcast)
_MULTI, _EXEC = encode(("MULTI",)), encode(("EXEC",))
_PEXPIRE = b"*3\r\n$7\r\nPEXPIRE\r\n"  # the command's head; the key and the ms follow


class RedisEventStore(EventStore):
    claims: RedisClaimStore

    def __init__(self, *, prefix: str = "mcp", max_events: int = 1000, ttl: float = 3600.0,
                 block_ms: int = 1000, buckets: int = 16, redis: RedisOptions | None = None,
                 **options: Any) -> None:
        connection = RedisOptions.take(redis, options)  # flat connection keys too (url=, ...)
        super().__init__(max_events=max_events, ttl=ttl, **options)
        if block_ms >= connection.socket_timeout * 1000:
            raise ValueError("block_ms must be shorter than socket_timeout")
        if buckets < 1:
            raise ValueError("buckets must be at least 1")
        self.prefix = check_prefix(prefix)
        self.block_ms = block_ms
        self.buckets = buckets
        self._redis = RedisConnector(connection)
        self._tails: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Tail] = weakref.WeakKeyDictionary()
        self.claims = RedisClaimStore(self._redis, self.prefix)

    def _tag(self, session_id: str) -> str:
        return f"{{{self.prefix}:ev:{zlib.crc32(session_id.encode()) % self.buckets}}}"

    def _stream(self, session_id: str, stream_id: str) -> str:
        return f"{self._tag(session_id)}:events:{session_id}:{stream_id}"

    def _streams(self, session_id: str) -> str:
        return f"{self._tag(session_id)}:streams:{session_id}"

    def _tail(self) -> Tail:
        loop = asyncio.get_running_loop()
        tail = self._tails.get(loop)
        if tail is None:
            tail = self._tails[loop] = Tail(self._redis.pipelined(), self.block_ms, self.max_events)
        return tail

    @property
    def _ttl_ms(self) -> int:
        return px(self.ttl)

    async def append(self, session_id: str, stream_id: str, message: dict[str, Any]) -> str:
        return (await self.append_many(session_id, stream_id, [message]))[0]

    def _append_block(self, session_id: str, stream_id: str, payloads: list[bytes],
                      tag: bytes | None = None) -> bytes:
        """One MULTI/EXEC block: the entries (in order), the stream's expiry and the session's
        bookkeeping, atomically (a lost connection before EXEC leaves nothing half done, so it
        is retried safely; no Lua: a script costs Redis twice the CPU of the same commands).
        ``tag`` (a bulk string) adds a field ``t`` after ``m`` (readers take ``m``, the first)."""
        key, index = bulk(self._stream(session_id, stream_id)), bulk(self._streams(session_id))
        ttl = bulk(self._ttl_ms)
        parts = [_MULTI]
        for payload in payloads:
            head, rest = self._xadd(payload, tag)
            parts.append(head + key + rest)
        parts += [_PEXPIRE + key + ttl, b"*3\r\n$4\r\nSADD\r\n" + index + key,
                  _PEXPIRE + index + ttl, _EXEC]
        return b"".join(parts)

    def _xadd(self, payload: bytes, tag: bytes | None) -> tuple[bytes, bytes]:
        """``XADD <key> MAXLEN ~ <max_events> * m <payload> [t <tag>]`` in RESP, as the bytes
        before and after the key (a broadcast builds them once for every session's key)."""
        head = b"*8\r\n$4\r\nXADD\r\n" if tag is None else b"*10\r\n$4\r\nXADD\r\n"
        rest = (b"$6\r\nMAXLEN\r\n$1\r\n~\r\n" + bulk(self.max_events) + b"$1\r\n*\r\n$1\r\nm\r\n"
                + payload + (b"" if tag is None else b"$1\r\nt\r\n" + tag))
        return head, rest

    @staticmethod
    def _block_replies(count: int) -> int:
        return count + 5  # MULTI, each queued command (count + 3), EXEC

    @staticmethod
    def _entries(replies: list[Any], count: int) -> list[str]:
        result = replies[-1]
        if isinstance(result, Exception):
            raise result
        errors = [r for r in [*replies, *(result if isinstance(result, list) else ())]
                  if isinstance(r, Exception)]
        if errors or not isinstance(result, list):
            raise errors[0] if errors else redis.exceptions.ResponseError("EXEC aborted")
        return [str(e) for e in result[:count]]

    async def append_many(self, session_id: str, stream_id: str, messages: list[dict[str, Any]]) -> list[str]:
        return await self._append_bulks(session_id, stream_id, [bulk(json.dumps(m)) for m in messages])

    async def append_encoded(self, session_id: str, stream_id: str, payloads: list[bytes], *,
                             final: bool = False) -> list[str]:
        return await self._append_bulks(session_id, stream_id, [bulk(p) for p in payloads])

    async def _append_bulks(self, session_id: str, stream_id: str, payloads: list[bytes]) -> list[str]:
        if not payloads:
            return []
        block = self._append_block(session_id, stream_id, payloads)
        with unavailable_as_store_error():
            replies = await self._redis.pipelined().pipeline_packed(
                block, self._block_replies(len(payloads)), key=self._streams(session_id), retry=True)
            entries = self._entries(replies, len(payloads))
        return [make_event_id(stream_id, seq_of(e)) for e in entries]

    async def broadcast(self, session_ids: list[str], stream_id: str, message: dict[str, Any],
                        *, tag: str | None = None) -> int:
        """Pipelined: one write and one read per ``BROADCAST_BATCH`` sessions, not a round trip
        each."""
        pipelined = self._redis.pipelined()
        payload = bulk(json.dumps(message))
        marker = None if tag is None else bulk(tag)
        # A session's standalone stream needs no index entry (delete_session names it): its
        # append is XADD and PEXPIRE, and the appends of up to SESSIONS_PER_BLOCK sessions of
        # one bucket (one slot) share a MULTI/EXEC, whose bytes but the keys are built once (a
        # fan-out appends to every session: 10,000 per change; a block per session cost Redis
        # a MULTI and an EXEC each, and the SADD and the index's PEXPIRE a fifth of its CPU).
        lean = stream_id == STANDALONE_STREAM
        xadd, fields = self._xadd(payload, marker)
        fields += _PEXPIRE
        expiry = bulk(self._ttl_ms)
        per = self._block_replies(1)
        written = 0
        with unavailable_as_store_error():
            for start in range(0, len(session_ids), BROADCAST_BATCH):
                batch = session_ids[start:start + BROADCAST_BATCH]
                if not lean:
                    parts = [(self._streams(sid), self._append_block(sid, stream_id, [payload], marker), per)
                             for sid in batch]
                    for replies in await pipelined.pipeline_many(parts):
                        self._entries(replies, 1)
                        written += 1
                    continue
                buckets: dict[str, list[bytes]] = {}
                for sid in batch:
                    bucket = self._tag(sid)
                    packed = bulk(f"{bucket}:events:{sid}:{stream_id}")
                    buckets.setdefault(bucket, []).append(b"".join((xadd, packed, fields, packed, expiry)))
                parts = [(bucket, b"".join((_MULTI, *appends[at:at + SESSIONS_PER_BLOCK], _EXEC)),
                          2 + 2 * len(appends[at:at + SESSIONS_PER_BLOCK]))
                         for bucket, appends in buckets.items()
                         for at in range(0, len(appends), SESSIONS_PER_BLOCK)]
                for replies in await pipelined.pipeline_many(parts):
                    self._entries(replies, 0)  # raises the block's error, if any
                    written += (len(replies) - 2) // 2
        return written

    async def tagged(self, session_ids: list[str], stream_id: str, tag: str, within: float) -> set[str]:
        # Entry ids are times: only the entries of the last ``within`` seconds are read.
        since = f"{int((time.time() - within) * 1000)}-0"
        found: set[str] = set()
        with unavailable_as_store_error():
            for start in range(0, len(session_ids), BROADCAST_BATCH):
                batch = session_ids[start:start + BROADCAST_BATCH]
                replies = await self._redis.pipelined().pipeline(
                    [("XREVRANGE", self._stream(sid, stream_id), "+", since) for sid in batch])
                for sid, entries in zip(batch, replies, strict=True):
                    if isinstance(entries, Exception):
                        raise entries
                    if any(fields[2:4] == ["t", tag] for _, fields in entries or ()):
                        found.add(sid)
        return found

    async def listen(self, session_id: str, stream_id: str, after: str | None = None) -> AsyncIterator[Event]:
        start = ""
        if after is not None:
            after_stream, seq = parse_event_id(after)
            if after_stream != stream_id:
                raise UnknownEvent(f"Event {after!r} is not of stream {stream_id!r}")
            start = entry_id_of(seq)
        key = self._stream(session_id, stream_id)
        with unavailable_as_store_error():
            reply: list[Any] = await self._redis.pipelined().evalsha(
                REPLAY_SHA, REPLAY, [key], [start, self.max_events, self._ttl_ms])
        if reply[0] == -1:
            raise UnknownEvent(f"Event {after!r} is not retained")
        # Registered before the replay is yielded: the tail reads from the replay's newest entry,
        # so an append after the replay is in the tail, one before it in the replay, never both.
        tail = self._tail()
        watch = tail.watch(key, seq_of(reply[1]))
        try:
            for i in range(2, len(reply), 2):
                yield event_of(stream_id, seq_of(reply[i]), reply[i + 1])
            # Not kept in this frame for the stream's life (10,000 idle streams a worker).
            del reply, start
            while True:
                # Not unavailable_as_store_error(): a generator-based context manager and a
                # current_task() per wake-up of every stream of a fan-out. This awaits only
                # the tail's future (no redis-py call that could swallow a cancel); a failed
                # shard hands it its connection error.
                try:
                    batch = watch.take()
                except UNAVAILABLE as exc:
                    raise StoreUnavailable(f"Redis is unavailable: {exc}") from exc
                if isinstance(batch, list):
                    for seq, payload in batch:
                        yield event_of(stream_id, seq, payload)
                else:
                    await batch
        finally:
            tail.unwatch(watch)

    async def delete_session(self, session_id: str) -> None:
        client = await self._redis.ready_client()
        index = self._streams(session_id)
        with unavailable_as_store_error():
            keys: set[Any] = await client.smembers(index)
            # The standalone stream is not indexed when only broadcasts wrote it.
            await client.delete(index, *keys, self._stream(session_id, STANDALONE_STREAM))
        await self.claims.drop_stream(session_id)

    async def close(self) -> None:
        loop = asyncio.get_running_loop()
        tail = self._tails.pop(loop, None)
        self._tails.clear()
        if tail is not None:
            await tail.close()
        await self._redis.close()
