"""The protocol core stays transport- and framework-agnostic (house style: "``mcp_protocol`` never
imports ``registry``"; the core "never sees HTTP"). Checked on the source, by walking each module's
AST, so a lazy import inside a function counts as much as one at the top."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[3] / "mcp_protocol"
# The Django edge of the package: the app config, the settings reader and its system checks, the
# management command, the transports and their Channels routing (served through Django/Channels).
DJANGO_ALLOWED = ("transports/", "management/", "apps.py", "conf.py", "checks.py", "routing.py")


def _modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def _imported_roots(path: Path) -> set[str]:
    """Top-level names of every absolute import in the module (relative ones stay in the package)."""
    roots: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
    return roots


def _relative(path: Path) -> str:
    return path.relative_to(PACKAGE).as_posix()


def test_the_walk_sees_the_whole_package():
    names = {_relative(p) for p in _modules()}
    assert {"server.py", "context.py", "transports/stdio.py", "methods/tools.py", "conf.py"} <= names


def test_no_module_of_mcp_protocol_imports_registry():
    offenders = [_relative(p) for p in _modules() if "registry" in _imported_roots(p)]
    assert offenders == []


def test_the_protocol_core_does_not_import_django():
    core = [p for p in _modules() if not _relative(p).startswith(DJANGO_ALLOWED)]
    offenders = [_relative(p) for p in core if "django" in _imported_roots(p)]
    assert offenders == []


def test_the_guard_catches_lazy_imports(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from registry.models import Tool\n    import django.conf\n")
    assert {"registry", "django"} <= _imported_roots(module)
