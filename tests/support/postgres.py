"""A uniquely named PostgreSQL database on 127.0.0.1:5432 for one test module, dropped afterwards
(trust auth, user postgres); the module is skipped when PostgreSQL or psycopg is missing."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

PG_ADMIN = "host=127.0.0.1 port=5432 user=postgres dbname=postgres connect_timeout=3"


def temporary_database(prefix: str) -> Iterator[str]:
    """Yields the ``DATABASE_URL`` of a new database named ``<prefix>_<random>``; use it as the
    body of a module-scoped fixture."""
    psycopg = pytest.importorskip("psycopg")
    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    try:
        admin = psycopg.connect(PG_ADMIN, autocommit=True)
    except psycopg.OperationalError as exc:
        pytest.skip(f"no PostgreSQL at 127.0.0.1:5432: {exc}")
    with admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield f"postgres://postgres@127.0.0.1:5432/{name}"
    finally:
        with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
