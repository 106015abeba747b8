"""A lean pipelined Redis client for the hot path: one connection per event loop, RESP2.

Owns ``RespConnection`` (an ``asyncio.Protocol``: commands are written at once and their replies
resolve futures in request order, so concurrent requests of one worker share one socket and
pipeline by themselves) and ``FastRedis`` (the per-loop connection, its reconnect and timeouts).

Why not redis-py for these commands: its asyncio client spends ~100-200 µs of CPU per command
(pool checkout, locks, ``wait_for``), as much as the whole rest of a ``tools/call``; this costs a
write and a parse. redis-py stays for everything else (scripts with many steps, pub/sub, admin).

Semantics match ``connection.RedisConnector``: unreachable Redis raises the ``UNAVAILABLE`` errors
(``unavailable_as_store_error`` turns them into ``StoreUnavailable``); a command that finds its
connection dead is retried once on a fresh one; a command without a reply after ``timeout``
seconds fails with ``TimeoutError`` and closes the connection (its replies can no longer be
matched). No ``asyncio.wait_for`` anywhere, so a cancel is never swallowed (CPython gh-86296).
"""

from __future__ import annotations

import asyncio
import ssl
from collections import deque
from typing import Any, cast

import redis.exceptions
from redis.asyncio.connection import parse_url

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

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is not a subclass

    def data_received(self, data: bytes) -> None:
        self.buf += data
        pos = 0
        try:
            buf = self.buf
            while pos < len(buf) and self.pending:
                if buf.startswith(b"+QUEUED\r\n", pos):  # most replies of a MULTI block
                    reply, pos = "QUEUED", pos + 9
                else:
                    reply, pos = _parse(buf, pos)
                slot = self.pending[0]
                slot.replies.append(reply)
                if len(slot.replies) < slot.count:
                    continue
                self.pending.popleft()
                future = slot.future
                if future.done():  # a cancelled caller: its replies are read and dropped
                    continue
                if slot.group:
                    future.set_result(slot.replies)  # error replies stay in the list as objects
                elif isinstance(reply, redis.exceptions.RedisError):
                    future.set_exception(reply)
                else:
                    future.set_result(reply)
        except _Incomplete:
            pass
        except Exception as exc:  # a frame we cannot parse: nothing after it can be matched
            self.abort(redis.exceptions.ConnectionError(f"Bad reply from Redis: {exc}"))
            return
        del self.buf[:pos]

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
        if self.transport is not None and not self.closed:
            self.transport.write(b"".join(out) if len(out) > 1 else out[0])


def _expire(conn: RespConnection, future: asyncio.Future[Reply], timeout: float) -> None:
    """A reply overdue: the connection's later replies can no longer be matched; drop it."""
    if not future.done():
        conn.abort(redis.exceptions.TimeoutError(f"Redis did not answer within {timeout:g} s"))


class FastRedis:
    """The pipelined connection of one event loop (build one per loop; see ``RedisConnector``)."""

    def __init__(self, url: str, *, socket_timeout: float = 5.0, connect_timeout: float = 1.0) -> None:
        self.options = parse_url(url)
        self.ssl = url.startswith("rediss://")
        self.socket_timeout = socket_timeout
        self.connect_timeout = connect_timeout
        self._conn: RespConnection | None = None
        self._connecting: asyncio.Future[RespConnection] | None = None

    async def open(self) -> RespConnection:
        """A fresh connection, authenticated and on the right database (also for dedicated
        readers that block, which must not share the pipelined one)."""
        loop = asyncio.get_running_loop()
        opts = self.options
        try:
            async with asyncio.timeout(self.connect_timeout):
                if "path" in opts:
                    _, conn = await loop.create_unix_connection(RespConnection, opts["path"])
                else:
                    context = ssl.create_default_context() if self.ssl else None
                    _, conn = await loop.create_connection(
                        RespConnection, opts.get("host", "127.0.0.1"), int(opts.get("port", 6379)),
                        ssl=context)
        except OSError as exc:
            raise redis.exceptions.ConnectionError(f"Cannot connect to Redis: {exc}") from exc
        setup: list[tuple[Any, ...]] = []
        if opts.get("password"):
            user = opts.get("username")
            setup.append(("AUTH", user, opts["password"]) if user else ("AUTH", opts["password"]))
        if int(opts.get("db", 0) or 0):
            setup.append(("SELECT", int(opts["db"])))
        for args in setup:
            await self.call_on(conn, *args)
        return conn

    async def _connection(self) -> RespConnection:
        conn = self._conn
        if conn is not None and not conn.closed:
            return conn
        if self._connecting is None:
            # One connect for every caller that needs it at once.
            self._connecting = asyncio.ensure_future(self.open())
            self._connecting.add_done_callback(self._connected)
        return await asyncio.shield(self._connecting)

    def _connected(self, future: asyncio.Future[RespConnection]) -> None:
        self._connecting = None
        if not future.cancelled() and future.exception() is None:
            self._conn = future.result()

    async def call_on(self, conn: RespConnection, *args: Any, timeout: float | None = None) -> Reply:
        """One command on ``conn``; its reply (a Redis error reply raises)."""
        return await self._await(conn, conn.send(encode(args)),
                                 self.socket_timeout if timeout is None else timeout)

    @staticmethod
    async def _await(conn: RespConnection, future: asyncio.Future[Reply], timeout: float) -> Reply:
        timer = asyncio.get_running_loop().call_later(timeout, _expire, conn, future, timeout)
        try:
            return await future
        finally:
            timer.cancel()

    async def execute(self, *args: Any) -> Reply:
        """One command on the shared connection, retried once on a fresh connection if the
        connection was found dead (Redis restarted: pooled sockets fail once)."""
        conn = self._conn
        if conn is None or conn.closed:
            conn = await self._connection()
        try:
            return await self._await(conn, conn.send(encode(args)), self.socket_timeout)
        except redis.exceptions.ConnectionError:
            conn = await self._connection()
            return await self._await(conn, conn.send(encode(args)), self.socket_timeout)

    async def pipeline(self, commands: list[tuple[Any, ...]]) -> list[Reply]:
        """Several commands in one write; their replies in order, a Redis error reply as its
        exception object (not raised). Not retried: a lost connection raises."""
        return await self.pipeline_packed(b"".join([encode(c) for c in commands]), len(commands))

    async def pipeline_packed(self, packed: bytes, count: int, *, retry: bool = False) -> list[Reply]:
        """``pipeline`` of ``count`` commands already encoded (a caller sending many alike
        commands builds their bytes once). ``retry``: once more on a fresh connection if this one
        was dead (only for commands safe to repeat, such as one MULTI/EXEC block)."""
        if not count:
            return []
        try:
            return await self._pipeline_packed(packed, count)
        except redis.exceptions.ConnectionError:
            if not retry:
                raise
        return await self._pipeline_packed(packed, count)

    async def _pipeline_packed(self, packed: bytes, count: int) -> list[Reply]:
        conn = self._conn
        if conn is None or conn.closed:
            conn = await self._connection()
        replies: list[Reply] = await self._await(conn, conn.send(packed, count, group=True),
                                                 self.socket_timeout)
        return replies

    async def evalsha(self, sha: str, source: str, keys: list[str], args: list[Any]) -> Reply:
        try:
            return await self.execute("EVALSHA", sha, len(keys), *keys, *args)
        except redis.exceptions.NoScriptError:  # a restarted Redis lost its script cache
            return await self.execute("EVAL", source, len(keys), *keys, *args)

    def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.abort(redis.exceptions.ConnectionError("client closed"))
