"""``pip install`` of the project gives installable apps: the wheel carries their templates,
static files, fixtures, migrations and management commands, not only their modules."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from tests.support.wheel import build_wheel


@pytest.fixture(scope="module")
def wheel_names(tmp_path_factory: pytest.TempPathFactory) -> set[str]:
    wheel = build_wheel(tmp_path_factory.mktemp("wheel"))
    with zipfile.ZipFile(wheel) as archive:
        return set(archive.namelist())


def test_the_wheel_carries_the_apps_non_python_files(wheel_names: set[str]) -> None:
    root = Path(__file__).resolve().parents[2]
    expected = {
        p.relative_to(root).as_posix()
        for folder in ("registry/templates", "registry/static", "registry/fixtures")
        for p in (root / folder).rglob("*") if p.is_file() and "__pycache__" not in p.parts
    }  # fmt: skip
    assert expected and expected <= wheel_names
    assert "mcp_protocol/py.typed" in wheel_names


def test_the_wheel_carries_migrations_and_management_commands(wheel_names: set[str]) -> None:
    assert "registry/migrations/0001_initial.py" in wheel_names
    assert "mcp_protocol/management/commands/mcp_stdio.py" in wheel_names
    assert {"mcp_protocol/routing.py", "registry/checks.py"} <= wheel_names


def test_the_wheel_carries_no_test_or_development_files(wheel_names: set[str]) -> None:
    assert not [n for n in wheel_names if n.startswith(("tests/", "bench/", "examples/", "scripts/"))]
    assert not [n for n in wheel_names if n.endswith((".sqlite3", ".pyc"))]
