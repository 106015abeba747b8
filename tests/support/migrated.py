"""Migrated databases for test servers without running ``migrate`` for each: the suite's single
biggest setup cost (a ``manage.py migrate`` process is about 10 s on the 2-core CI machine, and
some fifty servers and fleets start in a run).

The first server that wants a migrated database runs the real ``migrate`` once into a template;
every later one gets a copy of it: the SQLite file copied, or on PostgreSQL
``CREATE DATABASE … TEMPLATE`` (the server's own copy mechanism). A copy is byte for byte what
``migrate`` left (schema, content types, permissions, the registry's first change set), so the
servers cannot tell.

One build per test run: under pytest-xdist the workers of a run share their templates (the run's
``PYTEST_XDIST_TESTRUNUID`` names a folder in the temporary directory; the first worker builds
under an exclusive ``fcntl.flock``, the other waits on the lock and then copies). Each template's
key also hashes the migration files, the project, the interpreter and the settings module, so a
template is never stale, and two runs at once on the machine (a helper and CI) never share one.
The controller removes the run's templates at the end (``remove_run`` from tests/conftest.py's
``pytest_sessionfinish``). Without xdist each process builds its own, removed at its exit.

    sqlite_copy(target, env, project_dir, python)   # LiveServer: its db.sqlite3
    postgres_copy(url)                              # Fleet.migrate(): its temporary database
"""

from __future__ import annotations

import atexit
import fcntl
import hashlib
import os
import re
import shutil
import sys
import tempfile
import threading
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

from .manage import ROOT, manage
from .postgres import PG_ADMIN

_lock = threading.Lock()
_sqlite: dict[tuple[str, str, str], Path] = {}
_postgres: dict[str, str] = {}  # settings module → template database name

_FOLDER_PREFIX = "mcpsite-migrated-"
# PostgreSQL names are at most 63 bytes: 12 + 32 (a uuid4 hex, xdist's run uid) + 1 + 16.
_PG_PREFIX = "mcpsite_tpl_"
_SKIP_DIRS = {".git", ".venv", ".tools", "node_modules", "__pycache__"}


def _run_uid() -> str | None:
    """This test run's id when pytest-xdist runs it (set in each worker), else ``None``."""
    run = re.sub(r"[^0-9A-Za-z]", "", os.environ.get("PYTEST_XDIST_TESTRUNUID", ""))
    return run[:32] or None


def _run_folder(run: str) -> Path:
    return Path(tempfile.gettempdir()) / f"{_FOLDER_PREFIX}{run}"


def _migrations_digest(*projects: Path) -> str:
    """A hash of every migration file of the projects (paths and contents): a changed, added or
    removed migration makes a new template."""
    digest = hashlib.sha256()
    for project in dict.fromkeys(p.resolve() for p in projects):
        for folder, dirs, files in os.walk(project):  # does not follow the .venv symlinks
            dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS)
            if Path(folder).name != "migrations":
                continue
            for name in sorted(f for f in files if f.endswith(".py")):
                path = Path(folder) / name
                digest.update(str(path.relative_to(project)).encode() + b"\0")
                digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def _key(project_dir: Path, python: str, settings_module: str) -> str:
    parts = (str(project_dir), python, settings_module, _migrations_digest(ROOT, project_dir))
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:16]


@contextmanager
def _exclusive(lock_file: Path) -> Iterator[None]:
    """Held by one process of the run at a time (the other blocks in ``flock``); released when the
    file closes, also if the holder dies."""
    lock_file.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_file, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def _migrate_sqlite(made: Path, env: Mapping[str, str], project_dir: Path, python: str) -> None:
    built = {**env, "DATABASE_URL": f"sqlite:///{made}"}
    manage(built, "migrate", "--noinput", "-v", "0", inherit=False, project_dir=project_dir, python=python)


def sqlite_copy(
    target: Path, env: Mapping[str, str], project_dir: Path = ROOT, python: str = sys.executable
) -> None:
    """``target`` becomes a migrated SQLite database of the project at ``project_dir`` (with the
    settings ``env`` names), copied from the run's (or this process's) template of it."""
    settings_module = env.get("DJANGO_SETTINGS_MODULE", "")
    key = (str(project_dir), python, settings_module)
    with _lock:
        template = _sqlite.get(key)
        if template is None:
            run = _run_uid()
            if run is None:
                folder = Path(tempfile.mkdtemp(prefix=_FOLDER_PREFIX))
                atexit.register(shutil.rmtree, folder, ignore_errors=True)
                template = folder / "db.sqlite3"
                _migrate_sqlite(template, env, project_dir, python)
            else:
                name = _key(project_dir, python, settings_module)
                template = _run_folder(run) / f"{name}.sqlite3"
                with _exclusive(_run_folder(run) / f"{name}.lock"):
                    if not template.exists():
                        # Built aside and renamed: the template's name exists only once complete,
                        # so a worker that died mid-migrate leaves nothing another would copy.
                        part = template.with_suffix(".part")
                        part.unlink(missing_ok=True)
                        _migrate_sqlite(part, env, project_dir, python)
                        os.replace(part, template)
            _sqlite[key] = template
    shutil.copyfile(template, target)


def _migrate_postgres(template: str, settings_module: str) -> None:
    import psycopg

    with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{template}" WITH (FORCE)')  # a half-built one
        admin.execute(f'CREATE DATABASE "{template}"')
    built = {
        "DJANGO_SETTINGS_MODULE": settings_module,
        "DATABASE_URL": f"postgres://postgres@127.0.0.1:5432/{template}",
        "REDIS_URL": "",
    }
    manage(built, "migrate", "--noinput", "-v", "0")


def postgres_copy(url: str, settings_module: str = "mcpsite.settings") -> None:
    """The (empty, unused) PostgreSQL database at ``url`` is made again as a copy of the run's (or
    this process's) migrated template."""
    import psycopg

    name = urlsplit(url).path.lstrip("/")
    with _lock:
        template = _postgres.get(settings_module)
        if template is None:
            run = _run_uid()
            key = _key(ROOT, sys.executable, settings_module)
            if run is None:
                template = f"{_PG_PREFIX}{uuid.uuid4().hex[:12]}_{key}"
                atexit.register(_drop, template)
                _migrate_postgres(template, settings_module)
            else:
                template = f"{_PG_PREFIX}{run}_{key}"
                # The database exists before migrate has finished: a marker file says it is whole.
                done = _run_folder(run) / f"pg-{key}.done"
                with _exclusive(_run_folder(run) / f"pg-{key}.lock"):
                    if not done.exists():
                        _migrate_postgres(template, settings_module)
                        done.touch()
            _postgres[settings_module] = template
        with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            # Two workers may copy the same template at once: CREATE DATABASE takes a share lock
            # on its template, and nothing stays connected to a template after its migrate.
            admin.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')


def remove_run(run: str) -> None:
    """Remove a finished test run's shared templates (its folder and its PostgreSQL templates):
    called once by the xdist controller after its workers are done."""
    run = re.sub(r"[^0-9A-Za-z]", "", run)[:32]
    if not run:
        return
    shutil.rmtree(_run_folder(run), ignore_errors=True)
    try:
        import psycopg
    except ImportError:
        return
    try:
        with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
            rows = admin.execute(
                "SELECT datname FROM pg_database WHERE datname LIKE %s", (f"{_PG_PREFIX}{run}_%",)
            ).fetchall()
    except psycopg.Error:
        return  # no PostgreSQL: no template was made there
    for (template,) in rows:
        _drop(template)


def _drop(name: str) -> None:
    import psycopg

    try:
        with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    except psycopg.Error:
        pass  # the server went away first: nothing left to drop
