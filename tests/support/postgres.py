"""A uniquely named PostgreSQL database on 127.0.0.1:5432 for one test module, dropped after.

    with temporary_database("mcpsite_api") as url:   # postgres://postgres@127.0.0.1:5432/<name>
        ...

Skips the test (``pytest.skip``) when psycopg or the server is missing.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

PG_ADMIN = "host=127.0.0.1 port=5432 user=postgres dbname=postgres connect_timeout=3"


@contextmanager
def temporary_database(prefix: str) -> Iterator[str]:
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
