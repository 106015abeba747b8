"""The import contracts (``[tool.importlinter]`` in pyproject.toml: the layers, the core free of
web frameworks, no cycles) are checked by ``lint-imports`` in ``scripts/test.sh`` before pytest.
This proves the check bites: on a copy of the tree whose core imports Django (inside a function,
where a hand-written walk used to look) and an app above it (behind ``TYPE_CHECKING``),
``lint-imports`` fails and names both contracts."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("mcpsite", "management_api", "connections", "registry", "access", "mcp_django")
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")

BROKEN = '''from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from registry.models import Tool


def settings_of_the_site():
    from django.conf import settings

    return settings
'''


@pytest.mark.timeout(120)
def test_lint_imports_fails_when_the_core_imports_django_or_an_app(tmp_path: Path) -> None:
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    for package in PACKAGES:
        (tmp_path / package).symlink_to(ROOT / package)
    shutil.copytree(ROOT / "mcp_protocol", tmp_path / "mcp_protocol",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "mcp_protocol" / "transports" / "site_settings.py").write_text(BROKEN)

    run = subprocess.run([str(LINT_IMPORTS), "--no-cache"], cwd=tmp_path, capture_output=True,
                         text=True, timeout=110)
    report = run.stdout + run.stderr

    assert run.returncode == 1, report
    assert "mcp_protocol is not allowed to import django" in report
    assert "mcp_protocol.transports.site_settings -> django (l.8)" in report
    assert "mcp_protocol is not allowed to import registry" in report
    assert "mcp_protocol.transports.site_settings -> registry.models (l.4)" in report


@pytest.mark.timeout(120)
def test_lint_imports_fails_when_an_app_grows_an_import_circle(tmp_path: Path) -> None:
    """Each app has its no-cycles contract (issue 36 item 2): a module of registry/serving/ that
    reads the snapshot, which is built on serving/'s types, breaks the registry's."""
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    for package in (*PACKAGES, "mcp_protocol", "oauth_server"):
        if package != "registry":
            (tmp_path / package).symlink_to(ROOT / package)
    shutil.copytree(ROOT / "registry", tmp_path / "registry",
                    ignore=shutil.ignore_patterns("__pycache__", "static", "templates", "fixtures"))
    (tmp_path / "registry" / "serving" / "fresh.py").write_text(
        "def state():\n    from ..snapshot import build_state\n\n    return build_state()\n"
    )

    run = subprocess.run([str(LINT_IMPORTS), "--no-cache"], cwd=tmp_path, capture_output=True,
                         text=True, timeout=110)
    report = run.stdout + run.stderr

    assert run.returncode == 1, report
    assert "No cycles between the modules and packages of the registry app (registry) BROKEN" in report
    assert "- .serving -> .snapshot (1 import)" in report
    assert "(registry.access) BROKEN" not in report
