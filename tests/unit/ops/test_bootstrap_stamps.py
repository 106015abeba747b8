"""``scripts/bootstrap.sh``: serving installs the project alone, testing adds its extras, and the
stamps let either command skip pip when what it needs is in: serve then test installs twice
(the extras were missing), test then serve installs once, a changed pyproject.toml installs again.

Run on a copy of the script and pyproject.toml, with a ``.venv/bin/python`` that records its
arguments instead of running pip: the stamp logic is the script's, the install is pip's.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
RECORDER = """#!/usr/bin/env bash
echo "$*" >> "$(dirname "$0")/../../pip.log"
"""


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    (tmp_path / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "bootstrap.sh", tmp_path / "scripts" / "bootstrap.sh")
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    python = tmp_path / ".venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(RECORDER)
    python.chmod(0o755)
    return tmp_path


def bootstrap(checkout: Path, *argv: str, env: dict[str, str] | None = None) -> list[str]:
    """Run bootstrap.sh; returns the packages pip was asked to install (``-e`` targets)."""
    log = checkout / "pip.log"
    log.unlink(missing_ok=True)
    subprocess.run(
        ["bash", "scripts/bootstrap.sh", *argv],
        cwd=checkout,
        check=True,
        timeout=30,
        env={"PATH": "/usr/bin:/bin", **(env or {})},
    )
    lines = log.read_text().splitlines() if log.exists() else []
    return [line.split("-e ", 1)[1] for line in lines if "-e " in line]


def test_serve_installs_the_project_without_the_test_extras(checkout: Path) -> None:
    assert bootstrap(checkout, "serve") == ["."]
    assert bootstrap(checkout, "serve") == []  # stamped: no pip at all


def test_test_installs_the_extras_after_serve_and_serve_then_needs_nothing(checkout: Path) -> None:
    assert bootstrap(checkout, "serve") == ["."]
    assert bootstrap(checkout, "test") == [".[test]"]
    assert bootstrap(checkout, "test") == []
    assert bootstrap(checkout, "serve") == []


def test_after_test_serve_installs_nothing_and_the_default_is_test(checkout: Path) -> None:
    assert bootstrap(checkout) == [".[test]"]
    assert bootstrap(checkout, "serve") == []
    assert bootstrap(checkout, env={"BOOTSTRAP": "test"}) == []


def test_a_changed_pyproject_installs_again_for_each_command(checkout: Path) -> None:
    assert bootstrap(checkout, "test") == [".[test]"]
    with open(checkout / "pyproject.toml", "a") as toml:
        toml.write("\n# a new pin\n")
    assert bootstrap(checkout, "serve") == ["."]
    assert bootstrap(checkout, "test") == [".[test]"]
    assert sorted(p.name.split("-")[1] for p in (checkout / ".venv").glob(".installed-*")) == [
        "serve",
        "test",
    ]


def test_an_unknown_kind_is_refused_with_a_message(checkout: Path) -> None:
    ran = subprocess.run(
        ["bash", "scripts/bootstrap.sh", "dev"], cwd=checkout, capture_output=True, text=True, timeout=30
    )
    assert ran.returncode == 2 and "serve or test, not 'dev'" in ran.stderr
