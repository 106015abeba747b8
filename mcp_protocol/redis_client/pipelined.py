"""A lean pipelined Redis client for the hot path: one connection per event loop to one server.

Owns ``PipelinedRedis`` (the per-loop connection over ``resp.RespConnection``, its reconnect and
timeouts) and ``Pipelined``, the interface the stores use, which ``cluster.PipelinedCluster`` also
implements. Commands name their ``key`` so that a Cluster client can route them; here it is
ignored (one server holds every key).

Why not redis-py for these commands: its asyncio client spends ~100-200 µs of CPU per command
(pool checkout, locks, ``wait_for``), as much as the whole rest of a ``tools/call``; this costs a
write and a parse. redis-py stays for everything else (scripts with many steps, pub/sub, admin).

Semantics match ``connection.RedisConnector``: unreachable Redis raises the ``UNAVAILABLE`` errors
(``unavailable_as_store_error`` turns them into ``StoreUnavailable``); a command that finds its
connection dead, or a demoted master (``READONLY``), is retried once on a fresh connection; a
command without a reply after ``timeout`` seconds fails with ``TimeoutError`` and closes the
connection (its replies can no longer be matched). No ``asyncio.wait_for`` anywhere, so a cancel
is never swallowed (CPython gh-86296). Under Sentinel, ``locate`` asks Sentinel for the master's
address on every connect, so a failover is followed by the first reconnect after it.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Awaitable, Callable, Hashable
from typing import Any, Protocol

import redis.exceptions
from redis.asyncio.connection import parse_url

from .resp import Reply, RespConnection, encode

Locate = Callable[[], Awaitable[tuple[str, int]]]
Part = tuple[str, bytes, int]  # (routing key, encoded commands, number of replies)

# A lost connection, or a master Sentinel replaced: worth one retry on a fresh connection.
_RETRY = (redis.exceptions.ConnectionError, redis.exceptions.ReadOnlyError)


class Pipelined(Protocol):
    """The hot-path client interface (``PipelinedRedis``, ``cluster.PipelinedCluster``)."""

    socket_timeout: float

    async def execute(self, *args: Any, key: str) -> Reply: ...
    async def pipeline(self, commands: list[tuple[Any, ...]]) -> list[Reply]: ...
    async def pipeline_packed(self, packed: bytes, count: int, *, key: str,
                              retry: bool = False) -> list[Reply]: ...
    async def pipeline_many(self, parts: list[Part]) -> list[list[Reply]]: ...
    async def evalsha(self, sha: str, source: str, keys: list[str], args: list[Any]) -> Reply: ...
    async def node_for(self, key: str) -> PipelinedRedis: ...
    def shard_of(self, key: str) -> Hashable: ...
    def forget_routes(self) -> None: ...
    def close(self) -> None: ...


def raise_first(replies: list[Reply]) -> None:
    """A pipeline's replies carry errors as values: raise the first."""
    for reply in replies:
        if isinstance(reply, Exception):
            raise reply


def _refused_as_replica(replies: list[Reply]) -> bool:
    """A block the server refused because it is no longer the master (nothing was executed)."""
    return any(r.__class__ is redis.exceptions.ReadOnlyError for r in replies)


def _expire(conn: RespConnection, future: asyncio.Future[Reply], timeout: float) -> None:
    """A reply overdue: the connection's later replies can no longer be matched; drop it."""
    if not future.done():
        conn.abort(redis.exceptions.TimeoutError(f"Redis did not answer within {timeout:g} s"))


class PipelinedRedis:
    """The pipelined connection of one event loop (build one per loop; see ``RedisConnector``).

    ``address`` overrides the url's host and port (a Cluster node); ``locate`` is asked for them
    on every connect (Sentinel)."""

    def __init__(self, url: str, *, socket_timeout: float = 5.0, connect_timeout: float = 1.0,
                 address: tuple[str, int] | None = None, locate: Locate | None = None) -> None:
        self.options = parse_url(url)
        self.ssl = url.startswith("rediss://")
        self.socket_timeout = socket_timeout
        self.connect_timeout = connect_timeout
        self.address = address
        self.locate = locate
        self._conn: RespConnection | None = None
        self._connecting: asyncio.Future[RespConnection] | None = None

    async def _where(self) -> tuple[str, int]:
        if self.locate is not None:
            return await self.locate()
        if self.address is not None:
            return self.address
        return self.options.get("host", "127.0.0.1"), int(self.options.get("port", 6379))

    async def open(self) -> RespConnection:
        """A fresh connection, authenticated and on the right database (also for dedicated
        readers that block, which must not share the pipelined one)."""
        loop = asyncio.get_running_loop()
        opts = self.options
        try:
            async with asyncio.timeout(self.connect_timeout):
                if "path" in opts and self.address is None and self.locate is None:
                    _, conn = await loop.create_unix_connection(RespConnection, opts["path"])
                else:
                    host, port = await self._where()
                    context = ssl.create_default_context() if self.ssl else None
                    _, conn = await loop.create_connection(RespConnection, host, port, ssl=context)
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

    async def call_packed_on(self, conn: RespConnection, packed: bytes, *, timeout: float) -> Reply:
        """One command already encoded (``resp.encode``) on ``conn``; its reply."""
        return await self._await(conn, conn.send(packed), timeout)

    @staticmethod
    async def _await(conn: RespConnection, future: asyncio.Future[Reply], timeout: float) -> Reply:
        timer = asyncio.get_running_loop().call_later(timeout, _expire, conn, future, timeout)
        try:
            return await future
        finally:
            timer.cancel()

    async def execute(self, *args: Any, key: str | None = None) -> Reply:
        """One command on the shared connection, retried once on a fresh connection if the
        connection was found dead (Redis restarted: pooled sockets fail once) or its server is no
        longer the master (READONLY: a command refused was not executed)."""
        conn = self._conn
        if conn is None or conn.closed:
            conn = await self._connection()
        try:
            return await self._await(conn, conn.send(encode(args)), self.socket_timeout)
        except _RETRY:
            conn = await self._connection()
            return await self._await(conn, conn.send(encode(args)), self.socket_timeout)

    async def pipeline(self, commands: list[tuple[Any, ...]]) -> list[Reply]:
        """Several commands in one write; their replies in order, a Redis error reply as its
        exception object (not raised). Not retried: a lost connection raises."""
        return await self.pipeline_packed(b"".join([encode(c) for c in commands]), len(commands))

    async def pipeline_packed(self, packed: bytes, count: int, *, key: str | None = None,
                              retry: bool = False) -> list[Reply]:
        """``pipeline`` of ``count`` commands already encoded (a caller sending many alike
        commands builds their bytes once). ``retry``: once more on a fresh connection if this one
        was dead or its server demoted (only for commands safe to repeat, such as one MULTI/EXEC
        block)."""
        if not count:
            return []
        conn = self._conn
        if conn is None or conn.closed:
            conn = await self._connection()
        try:
            replies: list[Reply] = await self._await(conn, conn.send(packed, count, group=True),
                                                     self.socket_timeout)
        except redis.exceptions.ConnectionError:
            if not retry:
                raise
        else:
            if not (retry and isinstance(replies[-1], Exception) and _refused_as_replica(replies)):
                return replies
        conn = await self._connection()
        replies = await self._await(conn, conn.send(packed, count, group=True), self.socket_timeout)
        return replies

    async def pipeline_many(self, parts: list[Part]) -> list[list[Reply]]:
        """Several parts (each one key's commands, such as a MULTI/EXEC block) in one write; each
        part's replies. Not retried."""
        replies = await self.pipeline_packed(b"".join([p for _, p, _ in parts]), sum(n for *_, n in parts))
        out, at = [], 0
        for _, _, count in parts:
            out.append(replies[at:at + count])
            at += count
        return out

    async def evalsha(self, sha: str, source: str, keys: list[str], args: list[Any]) -> Reply:
        try:
            return await self.execute("EVALSHA", sha, len(keys), *keys, *args)
        except redis.exceptions.NoScriptError:  # a restarted Redis lost its script cache
            return await self.execute("EVAL", source, len(keys), *keys, *args)

    async def node_for(self, key: str) -> PipelinedRedis:
        return self  # one server holds every key

    def shard_of(self, key: str) -> Hashable:
        return None  # any keys may share one command

    def forget_routes(self) -> None:
        pass

    def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.abort(redis.exceptions.ConnectionError("client closed"))
