"""Waiting with a deadline: ``within`` for something that announces itself (an awaitable), and
``eventually`` for a state nothing announces (an expiry, a failover, a server coming back), polled
until true; ``wait_until`` is ``eventually`` for code outside an event loop (a process or a Redis
server coming up); ``unlocked`` makes a database read a poll can take while a worker thread writes.
Every wait in the tests has a deadline; a missed one fails the test."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from django.db import OperationalError

T = TypeVar("T")


async def within(awaitable: Awaitable[T], seconds: float = 5.0) -> T:
    """``awaitable``'s result, or ``TimeoutError`` after ``seconds``."""
    return await asyncio.wait_for(awaitable, seconds)


async def eventually(check: Callable[[], Awaitable[bool]], seconds: float = 5.0, step: float = 0.02) -> None:
    """Poll ``check`` every ``step`` until it is true; fail after ``seconds``."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while not await check():
        if loop.time() > deadline:
            raise AssertionError(f"condition not met within {seconds} s")
        await asyncio.sleep(step)


def unlocked(check: Callable[[], Awaitable[bool]]) -> Callable[[], Awaitable[bool]]:
    """``check``, read as false while another connection holds a table lock. The tests' SQLite
    database lives in memory in shared-cache mode, where a read that meets another thread's write
    fails at once with "database table is locked" (SQLITE_LOCKED: no busy timeout applies); a file
    database, and PostgreSQL, make the reader wait instead."""

    async def polled() -> bool:
        try:
            return await check()
        except OperationalError as exc:
            if "locked" not in str(exc):
                raise
            return False

    return polled


def wait_until(what: str, check: Callable[[], bool], seconds: float, step: float = 0.05) -> None:
    """Poll ``check`` in this thread every ``step`` until it is true; fail after ``seconds``, naming
    ``what``."""
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {seconds} s")
        time.sleep(step)
