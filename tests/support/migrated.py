"""Migrated databases for test servers without running ``migrate`` for each: the suite's single
biggest setup cost (a ``manage.py migrate`` process is about 10 s on the 2-core CI machine, and
some fifty servers and fleets start in a run).

The first server of a test process that wants a migrated database runs the real ``migrate`` once
into a template; every later one gets a copy of it: the SQLite file copied, or on PostgreSQL
``CREATE DATABASE … TEMPLATE`` (the server's own copy mechanism). A copy is byte for byte what
``migrate`` left (schema, content types, permissions, the registry's first change set), so the
servers cannot tell. Templates live as long as the test process (a session of pytest-xdist
workers builds one each) and are built from this checkout, so they cannot be stale.

    sqlite_copy(target, env, project_dir, python)   # LiveServer: its db.sqlite3
    postgres_copy(url)                              # Fleet.migrate(): its temporary database
"""

from __future__ import annotations

import atexit
import shutil
import sys
import tempfile
import threading
import uuid
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlsplit

from .manage import ROOT, manage
from .postgres import PG_ADMIN

_lock = threading.Lock()
_sqlite: dict[tuple[str, str, str], Path] = {}
_postgres: dict[str, str] = {}  # settings module → template database name


def sqlite_copy(
    target: Path, env: Mapping[str, str], project_dir: Path = ROOT, python: str = sys.executable
) -> None:
    """``target`` becomes a migrated SQLite database of the project at ``project_dir`` (with the
    settings ``env`` names), copied from this process's template of it."""
    key = (str(project_dir), python, env.get("DJANGO_SETTINGS_MODULE", ""))
    with _lock:
        template = _sqlite.get(key)
        if template is None:
            folder = Path(tempfile.mkdtemp(prefix="mcpsite-migrated-"))
            atexit.register(shutil.rmtree, folder, ignore_errors=True)
            made = folder / "db.sqlite3"
            built = {**env, "DATABASE_URL": f"sqlite:///{made}"}
            manage(
                built,
                "migrate",
                "--noinput",
                "-v",
                "0",
                inherit=False,
                project_dir=project_dir,
                python=python,
            )
            template = _sqlite[key] = made
    shutil.copyfile(template, target)


def postgres_copy(url: str, settings_module: str = "mcpsite.settings") -> None:
    """The (empty, unused) PostgreSQL database at ``url`` is made again as a copy of this
    process's migrated template."""
    import psycopg

    name = urlsplit(url).path.lstrip("/")
    with _lock:
        template = _postgres.get(settings_module)
        if template is None:
            template = f"mcpsite_template_{uuid.uuid4().hex[:12]}"
            with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
                admin.execute(f'CREATE DATABASE "{template}"')
            atexit.register(_drop, template)
            built = {
                "DJANGO_SETTINGS_MODULE": settings_module,
                "DATABASE_URL": f"postgres://postgres@127.0.0.1:5432/{template}",
                "REDIS_URL": "",
            }
            manage(built, "migrate", "--noinput", "-v", "0")
            _postgres[settings_module] = template
        with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            admin.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')


def _drop(name: str) -> None:
    import psycopg

    try:
        with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    except psycopg.Error:
        pass  # the server went away first: nothing left to drop
