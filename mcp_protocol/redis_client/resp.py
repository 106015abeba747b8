"""The RESP2 wire for the hot-path clients: encoding, parsing, and one pipelined connection.

Owns ``RespConnection`` (an ``asyncio.Protocol``: commands are written at once and their replies
resolve futures in request order, so concurrent requests of one worker share one socket and
pipeline by themselves) and the codec (``encode``, ``bulk``, the reply parser). The clients built
on it are ``pipelined.PipelinedRedis`` (one server) and ``cluster.PipelinedCluster`` (Redis Cluster).

Error replies become redis-py's exception classes, so callers catch one family: ``READONLY``
(a master demoted by a failover) also retires the connection, so the next command reconnects
and, under Sentinel, asks for the new master; ``MOVED``/``ASK``/``TRYAGAIN``/``CLUSTERDOWN`` are
what ``cluster.PipelinedCluster`` reacts to.
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Any, cast

import redis.exceptions

try:  # the C parser (a dependency); the Python one below stays for an install without it
    import hiredis
except ImportError:  # pragma: no cover
    hiredis = None  # type: ignore[assignment]

Reply = Any


class _Incomplete(Exception):
    pass


def bulk(arg: Any) -> bytes:
    """One RESP bulk string (command arguments are sent as bulk strings)."""
    data = arg if isinstance(arg, bytes) else str(arg).encode()
    return b"$%d\r\n%b\r\n" % (len(data), data)


def encode(args: tuple[Any, ...]) -> bytes:
    return b"*%d\r\n" % len(args) + b"".join([bulk(a) for a in args])


def _error(text: str) -> redis.exceptions.RedisError:
    if text.startswith("NOSCRIPT"):
        return redis.exceptions.NoScriptError(text)
    if text.startswith("LOADING"):
        return redis.exceptions.BusyLoadingError(text)
    if text.startswith("READONLY"):
        return redis.exceptions.ReadOnlyError(text)
    if text.startswith("MOVED "):
        return redis.exceptions.MovedError(text[6:])  # "<slot> <host>:<port>"
    if text.startswith("ASK "):
        return redis.exceptions.AskError(text[4:])
    if text.startswith("TRYAGAIN"):
        return redis.exceptions.TryAgainError(text)
    if text.startswith("MASTERDOWN"):
        return redis.exceptions.MasterDownError(text)
    if text.startswith("CLUSTERDOWN"):
        return redis.exceptions.ClusterDownError(text)
    return redis.exceptions.ResponseError(text)


_BULK, _ARRAY, _INT, _SIMPLE, _ERROR = b"$"[0], b"*"[0], b":"[0], b"+"[0], b"-"[0]


def _parse(buf: bytearray, pos: int) -> tuple[Reply, int]:
    end = buf.find(b"\r\n", pos)
    if end < 0:
        raise _Incomplete
    kind = buf[pos]
    if kind == _BULK:
        size = int(buf[pos + 1:end])
        if size < 0:
            return None, end + 2
        start = end + 2
        if len(buf) < start + size + 2:
            raise _Incomplete
        return buf[start:start + size].decode(), start + size + 2
    if kind == _ARRAY:
        count = int(buf[pos + 1:end])
        if count < 0:
            return None, end + 2
        pos = end + 2
        items = []
        for _ in range(count):
            item, pos = _parse(buf, pos)
            items.append(item)
        return items, pos
    if kind == _INT:
        return int(buf[pos + 1:end]), end + 2
    if kind == _SIMPLE:
        return buf[pos + 1:end].decode(), end + 2
    if kind == _ERROR:
        return _error(buf[pos + 1:end].decode()), end + 2
    raise redis.exceptions.InvalidResponse(f"Unexpected RESP type {kind!r}")


class _ReplyError(redis.exceptions.ResponseError):
    """An error reply as hiredis builds it; top-level ones become ``_error``'s classes, nested
    ones (inside an EXEC or a pipeline group) stay ``ResponseError``s as ``_parse`` makes them."""


def _reader() -> Any:
    return hiredis.Reader(encoding="utf-8", replyError=_ReplyError,
                          protocolError=redis.exceptions.InvalidResponse)


class _Slot:
    """The replies awaited for one send: one command, or a group resolved as one list."""

    __slots__ = ("count", "future", "group", "replies")

    def __init__(self, future: asyncio.Future[Reply], count: int, group: bool) -> None:
        self.future, self.count, self.group = future, count, group
        self.replies: list[Reply] = []


class RespConnection(asyncio.Protocol):
    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.pending: deque[_Slot] = deque()
        self.buf = bytearray()
        self.closed = False
        self.out: list[bytes] = []
        self.reader = _reader() if hiredis is not None else None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is not a subclass

    def data_received(self, data: bytes) -> None:
        if self.reader is not None:
            self._received(data)
            return
        self.buf += data
        pos = 0
        try:
            buf = self.buf
            while pos < len(buf) and self.pending:
                if buf.startswith(b"+QUEUED\r\n", pos):  # most replies of a MULTI block
                    reply, pos = "QUEUED", pos + 9
                else:
                    reply, pos = _parse(buf, pos)
                if type(reply) is redis.exceptions.ReadOnlyError:  # type: ignore[comparison-overlap]
                    self.retire()  # a demoted master: what follows must go to the new one
                self._resolve(reply)
        except _Incomplete:
            pass
        except Exception as exc:  # a frame we cannot parse: nothing after it can be matched
            self.abort(redis.exceptions.ConnectionError(f"Bad reply from Redis: {exc}"))
            return
        del self.buf[:pos]
        if self.closed and not self.pending and self.transport is not None:
            self.transport.close()  # retired, and every reply it owed has arrived

    def _received(self, data: bytes) -> None:
        reader = self.reader
        reader.feed(data)
        try:
            while self.pending:
                reply = reader.gets()
                if reply is False:
                    return  # incomplete: the rest comes with the next read
                if type(reply) is _ReplyError:
                    reply = _error(str(reply))
                    if type(reply) is redis.exceptions.ReadOnlyError:
                        self.retire()  # a demoted master: what follows must go to the new one
                self._resolve(reply)
        except Exception as exc:  # a frame we cannot parse: nothing after it can be matched
            self.abort(redis.exceptions.ConnectionError(f"Bad reply from Redis: {exc}"))
            return
        finally:
            if self.closed and not self.pending and self.transport is not None:
                self.transport.close()  # retired, and every reply it owed has arrived

    def _resolve(self, reply: Reply) -> None:
        slot = self.pending[0]
        slot.replies.append(reply)
        if len(slot.replies) < slot.count:
            return
        self.pending.popleft()
        future = slot.future
        if future.done():  # a cancelled caller: its replies are read and dropped
            return
        if slot.group:
            future.set_result(slot.replies)  # error replies stay in the list as objects
        elif isinstance(reply, redis.exceptions.RedisError):
            future.set_exception(reply)
        else:
            future.set_result(reply)

    def retire(self) -> None:
        """Take no new command (``send`` raises ``ConnectionError``: the caller reconnects); close
        once the replies already owed have arrived."""
        self.closed = True

    def connection_lost(self, exc: Exception | None) -> None:
        self.abort(redis.exceptions.ConnectionError(f"Connection to Redis lost: {exc or 'closed'}"))

    def abort(self, exc: BaseException) -> None:
        self.closed = True
        pending, self.pending = self.pending, deque()
        for slot in pending:
            if not slot.future.done():
                slot.future.set_exception(exc)
                slot.future.exception()  # retrieved: nobody may await a cancelled caller's slot
        if self.transport is not None:
            self.transport.close()

    def send(self, packed: bytes, replies: int = 1, *, group: bool = False) -> asyncio.Future[Reply]:
        """Write ``packed`` (``replies`` commands); the future of the reply, or with ``group``
        of the list of all ``replies`` replies."""
        if self.closed or self.transport is None or self.transport.is_closing():
            raise redis.exceptions.ConnectionError("Connection to Redis is closed")
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Reply] = loop.create_future()
        self.pending.append(_Slot(future, replies, group))
        # Auto-pipelining: commands sent during one loop iteration (concurrent requests) leave
        # in one write at its end, one syscall here and one read/write cycle in Redis.
        if not self.out:
            loop.call_soon(self._flush)
        self.out.append(packed)
        return future

    def _flush(self) -> None:
        out, self.out = self.out, []
        # Not ``closed``: a retired connection still owes (and sends) what was queued before.
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(b"".join(out) if len(out) > 1 else out[0])
