"""Micro-benchmark of the audit spool's drain (``access/drain.py``): CPU per row (not a test).

    flock /tmp/bench.lock .venv/bin/python bench/bench_drain.py [--entries 50000] [--rounds 3]
        [--batch 5000] [--database sqlite|postgres]

Each round fills the spool through the real ``RedisSpoolSink`` (what a keyed server appends for
``tools/call echo``), then times ``Drain.run(once=True)`` over it in this process: its CPU
(``time.process_time``) per row written, split by phase when the drain reports phases (read:
XREADGROUP and its reply; decode: entries to rows; write: INSERTs and the commit; ack: XACK and
the trim). The database is a fresh SQLite file (the bench's and tests' database) or, with
``--database postgres``, a throwaway database on 127.0.0.1:5432. Keys go under a random prefix
that is deleted afterwards. A round of 50,000 entries takes a few seconds.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import logging
import os
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

REDIS_URL = "redis://127.0.0.1:6379/0"
PHASES = ("read", "decode", "write", "ack")


def setup(database: str, workdir: Path) -> str:
    """Django on a fresh database, migrated; returns a description."""
    if database == "postgres":
        name = f"bench_drain_{uuid.uuid4().hex[:8]}"
        import psycopg

        with psycopg.connect("postgresql://postgres@127.0.0.1:5432/postgres", autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        os.environ["DATABASE_URL"] = f"postgresql://postgres@127.0.0.1:5432/{name}"
    else:
        os.environ["DATABASE_URL"] = f"sqlite:///{workdir / 'db.sqlite3'}"
    os.environ["DJANGO_SETTINGS_MODULE"] = "mcpsite.settings"
    os.environ["DJANGO_DEBUG"] = "0"  # as run_all and production: no SQL logging cursor
    os.environ.setdefault("SECRET_KEY", "bench-only-secret-key-not-for-production-use-0123456789")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)
    return os.environ["DATABASE_URL"]


def teardown(database: str) -> None:
    if database != "postgres":
        return
    from django.db import connection

    name = connection.settings_dict["NAME"]
    connection.close()
    import psycopg

    with psycopg.connect("postgresql://postgres@127.0.0.1:5432/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')


async def fill(prefix: str, count: int) -> None:
    """``count`` entries through the sink, in the audit queue's batches (up to 500)."""
    from access.spool import RedisSpoolSink
    from mcp_protocol.auth.audit import AuditEntry

    sink = RedisSpoolSink(url=REDIS_URL, prefix=prefix, max_entries=count + 1)
    now = time.time()
    for start in range(0, count, 500):
        entries = []
        for n in range(start, min(count, start + 500)):
            arguments = {"text": f"hello {n}"}
            entries.append(AuditEntry(now + n * 1e-4, "key 3f9a01bc", "key:1", "5b0c8f0e2d3a4c1e9f",
                                      "2025-11-25", "tools/call", "echo", arguments, "ok", "", 0.183,
                                      json.dumps(arguments)))
        await sink.write(sink.encode(entries))
    await sink.close()


def one_round(count: int, batch: int) -> dict[str, float]:
    from django.db import connection

    from access.drain import Drain
    from access.models import AuditRecord
    from tests.support.shared_redis import drop_keys

    prefix = f"bench-drain-{uuid.uuid4().hex[:8]}"
    try:
        asyncio.run(fill(prefix, count))
        drain = Drain(url=REDIS_URL, prefix=prefix, block=0.1, batch=batch)
        gc.freeze()  # as manage.py drain_audit does before it runs
        started, wall = time.process_time(), time.perf_counter()
        totals = drain.run(once=True)
        cpu, wall = time.process_time() - started, time.perf_counter() - wall
        stored = AuditRecord.objects.count()
        if totals.written != count or stored != count:
            raise RuntimeError(f"wrote {totals.written}, stored {stored}, of {count}")
        drain.redis.close()
    finally:
        drop_keys(prefix, REDIS_URL)
        with connection.cursor() as cursor:
            cursor.execute(f"DELETE FROM {AuditRecord._meta.db_table}")
    figures = {"total": cpu / count * 1e6, "wall": wall / count * 1e6, "batches": float(totals.batches)}
    phases = getattr(totals, "phases", None) or {}
    for phase in PHASES:
        if phase in phases:
            figures[phase] = phases[phase] / count * 1e6
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=50_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--batch", type=int, default=5000)
    parser.add_argument("--database", choices=("sqlite", "postgres"), default="sqlite")
    args = parser.parse_args()
    logging.getLogger("access.spool").setLevel(logging.ERROR)  # "no drain seen" while filling
    with tempfile.TemporaryDirectory() as tmp:
        where = setup(args.database, Path(tmp))
        try:
            results = []
            for n in range(args.rounds):
                result = one_round(args.entries, args.batch)
                results.append(result)
                split = "  ".join(f"{p} {result[p]:5.2f}" for p in PHASES if p in result)
                print(f"round {n + 1}: {result['total']:6.2f} us CPU/row  ({split})  wall "
                      f"{result['wall']:6.2f} us/row, {result['batches']:.0f} batches", flush=True)
        finally:
            teardown(args.database)
    median = {k: statistics.median(r[k] for r in results) for k in results[0]}
    split = "  ".join(f"{p} {median[p]:.2f}" for p in PHASES if p in median)
    print(f"\ndrain, {args.entries:,} entries, batch {args.batch}, {where.split(':')[0]}: "
          f"median {median['total']:.2f} us CPU per row  ({split})")


if __name__ == "__main__":
    main()
