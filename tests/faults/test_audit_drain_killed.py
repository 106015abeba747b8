"""The audit spool's drain killed between its commit and its acknowledgement: a real
``manage.py drain_audit`` process is SIGKILLed right after its transaction committed (it holds
there, ``--hold-after-commit``); the next drain takes its entries over and every spooled entry is
in ``AuditRecord`` exactly once. Then two drains running side by side share a spool and still
store each entry once. Real Redis (a prefix of the test's own), a real SQLite file."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from access.drain import GROUP
from access.spool import RedisSpoolSink, SpoolKeys
from mcp_protocol.auth.audit import AuditEntry, AuditQueue
from tests.support.live_server import ROOT
from tests.support.manage import manage
from tests.support.migrated import postgres_copy, sqlite_copy
from tests.support.postgres import temporary_database
from tests.support.shared_redis import REDIS_URL, redis_prefix

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def env(tmp_path: Path) -> Iterator[dict[str, str]]:
    with redis_prefix() as prefix:
        env = {**os.environ, "DJANGO_SETTINGS_MODULE": "mcpsite.settings", "PYTHONUNBUFFERED": "1",
               "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}", "REDIS_URL": REDIS_URL,
               "MCP_KEY_PREFIX": prefix, "MCP_AUDIT_SINK": "redis"}
        sqlite_copy(tmp_path / "db.sqlite3", env)
        yield env


def drain(env: dict[str, str], *argv: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, str(ROOT / "manage.py"), "drain_audit", *argv], cwd=ROOT,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def spool(env: dict[str, str], numbers: range) -> None:
    async def run() -> None:
        queue = AuditQueue(RedisSpoolSink(url=REDIS_URL, prefix=env["MCP_KEY_PREFIX"]))
        for n in numbers:
            queue.record(AuditEntry(time.time(), "key ab", "key:1", "s", "2025-11-25", "tools/call",
                                    "echo", {"n": n}, "ok", "", 0.5))
        await queue.close()

    asyncio.run(run())


def stored(env: dict[str, str]) -> list[int]:
    with sqlite3.connect(env["DATABASE_URL"].removeprefix("sqlite:///")) as db:
        return sorted(json.loads(a)["n"] for (a,) in db.execute("SELECT arguments FROM access_auditrecord"))


def spool_state(env: dict[str, str]) -> tuple[int, int]:
    keys, client = SpoolKeys(env["MCP_KEY_PREFIX"]), redis.Redis.from_url(REDIS_URL)
    try:
        return client.xlen(keys.stream), client.xpending(keys.stream, GROUP)["pending"]
    finally:
        client.close()


def test_a_drain_killed_between_commit_and_ack_loses_nothing_and_doubles_nothing(
        env: dict[str, str]) -> None:
    spool(env, range(12))
    victim = drain(env, "--batch", "5", "--hold-after-commit", "60")
    try:
        assert victim.stdout is not None
        assert victim.stdout.readline().strip() == "committed 5"  # in the database, not acknowledged
        os.kill(victim.pid, signal.SIGKILL)
        victim.wait(10)
    finally:
        if victim.poll() is None:
            victim.kill()
    assert stored(env) == list(range(5))
    assert spool_state(env) == (12, 5)
    # The next drain (cron's --once; a long-running one after --claim-after) takes them over.
    out = manage(env, "drain_audit", "--once", "--claim-after", "0")
    assert "5 taken over" in out, out
    assert stored(env) == list(range(12))  # each exactly once
    assert spool_state(env) == (0, 0)  # acknowledged and trimmed


def test_two_drains_side_by_side_store_each_entry_once(env: dict[str, str]) -> None:
    drains = [drain(env, "--batch", "50", "--consumer", name) for name in ("one", "two")]
    try:
        keys, client = SpoolKeys(env["MCP_KEY_PREFIX"]), redis.Redis.from_url(REDIS_URL)
        deadline = time.monotonic() + 30
        while True:  # both reading (a consumer appears at its first read)
            with contextlib.suppress(redis.ResponseError):  # no group yet
                if len(client.xinfo_consumers(keys.stream, GROUP)) == 2:
                    break
            assert time.monotonic() < deadline
            time.sleep(0.1)
        client.close()
        for start in range(0, 1000, 250):
            spool(env, range(start, start + 250))
        deadline = time.monotonic() + 30
        while len(found := stored(env)) < 1000 or spool_state(env) != (0, 0):
            assert time.monotonic() < deadline, (len(found), spool_state(env))
            time.sleep(0.2)
        assert found == list(range(1000))
    finally:
        for process in drains:
            process.send_signal(signal.SIGTERM)  # ends after its current step
        outs = []
        for process in drains:
            out, err = process.communicate(timeout=15)
            assert process.returncode == 0, err
            outs.append(out)
    # Between them, each entry read once (a live drain's entries are not taken over).
    assert sum(int(out.split("drained ")[1].split()[0]) for out in outs) == 1000, outs


def test_on_postgresql_a_drain_killed_between_commit_and_ack_loses_nothing_and_doubles_nothing(
        env: dict[str, str]) -> None:
    """The production database's path (the arguments bound as jsonb, ``ON CONFLICT DO NOTHING``)."""
    psycopg = pytest.importorskip("psycopg")
    with temporary_database("mcpsite_drain") as url:
        env = {**env, "DATABASE_URL": url}
        postgres_copy(url)
        spool(env, range(12))
        victim = drain(env, "--batch", "5", "--hold-after-commit", "60")
        try:
            assert victim.stdout is not None
            assert victim.stdout.readline().strip() == "committed 5"
            os.kill(victim.pid, signal.SIGKILL)
            victim.wait(10)
        finally:
            if victim.poll() is None:
                victim.kill()
        out = manage(env, "drain_audit", "--once", "--claim-after", "0")
        assert "5 taken over" in out, out
        with psycopg.connect(url) as db:
            found = db.execute("SELECT arguments, principal_id, duration_ms FROM access_auditrecord"
                               ).fetchall()
        assert sorted(a["n"] for a, _, _ in found) == list(range(12))  # jsonb, each exactly once
        assert {(p, d) for _, p, d in found} == {("key:1", 0.5)}
        assert spool_state(env) == (0, 0)
