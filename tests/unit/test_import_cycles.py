"""No import circle in any package of the product (issue 36 item 2), found by reading the source.

``lint-imports`` holds the same rule (``acyclic_siblings`` over every app in ``[tool.importlinter]``);
this walk is independent of it and counts every import the interpreter could run: relative ones,
those inside functions and those behind ``TYPE_CHECKING``. For each package, its direct children
(a module, or a subpackage with everything under it) are the nodes, and an import from anything
under one child of anything under another is an edge; a circle among the children is reported as
the modules that close it, so the message says which import to cut.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PRODUCT = ("mcp_protocol", "mcp_django", "registry", "access", "oauth_server", "management_api", "mcpsite")

# (importer module, imported module, line)
Edge = tuple[str, str, int]


def modules_of(root: Path, top: str) -> dict[str, Path]:
    """Every module under ``top`` by dotted name (a package by its own name)."""
    found = {}
    for path in sorted((root / top).rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def imports_of(name: str, path: Path, known: dict[str, Path]) -> Iterable[Edge]:
    """What ``name`` imports among ``known``: absolute and relative, at any depth of the file."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield from _known(name, alias.name, node.lineno, known)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            for alias in node.names:
                submodule = f"{target}.{alias.name}"
                yield from _known(name, submodule if submodule in known else target, node.lineno, known)


def _known(importer: str, imported: str, line: int, known: dict[str, Path]) -> Iterable[Edge]:
    while imported and imported not in known:  # a name inside a module: the module
        imported = imported.rpartition(".")[0]
    if imported and imported != importer:
        yield importer, imported, line


def child_of(package: str, module: str) -> str | None:
    """The direct child of ``package`` that ``module`` is or lies under, else None."""
    if not module.startswith(package + "."):
        return None
    return package + "." + module[len(package) + 1 :].split(".")[0]


def find_cycle(package: str, edges: list[Edge]) -> list[Edge] | None:
    """One circle among the direct children of ``package``, as the imports that make it."""
    graph: dict[str, dict[str, Edge]] = {}
    for importer, imported, line in edges:
        a, b = child_of(package, importer), child_of(package, imported)
        if a and b and a != b:
            graph.setdefault(a, {}).setdefault(b, (importer, imported, line))
    state: dict[str, int] = {}  # 1: on the path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[Edge] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, {})):
            if state.get(nxt) == 1:
                loop = [*path[path.index(nxt) :], nxt]
                return [graph[x][y] for x, y in itertools.pairwise(loop)]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state:
            found = visit(start)
            if found:
                return found
    return None


def cycles(root: Path, tops: Iterable[str]) -> dict[str, list[Edge]]:
    """Each package of ``tops`` (at any depth) with a circle among its children, and the circle."""
    known: dict[str, Path] = {}
    for top in tops:
        known.update(modules_of(root, top))
    edges = [edge for name, path in known.items() for edge in imports_of(name, path, known)]
    packages = [name for name, path in known.items() if path.name == "__init__.py"]
    return {p: cycle for p in sorted(packages) if (cycle := find_cycle(p, edges))}


def describe(found: dict[str, list[Edge]]) -> str:
    return "\n".join(
        f"{package}: " + " -> ".join(f"{a} (l.{line}) -> {b}" for a, b, line in cycle)
        for package, cycle in found.items()
    )


def test_no_package_of_the_product_has_an_import_circle() -> None:
    found = cycles(ROOT, PRODUCT)
    assert not found, "import circles (cut one import of each):\n" + describe(found)


def test_a_circle_through_a_relative_import_behind_type_checking_is_found(tmp_path: Path) -> None:
    pkg = tmp_path / "app"
    (pkg / "inner").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "inner" / "__init__.py").write_text("")
    (pkg / "inner" / "reader.py").write_text("def read():\n    from ..specs import Spec\n")
    (pkg / "specs.py").write_text(
        "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from .inner.reader import read\n"
    )
    (pkg / "leaf.py").write_text("from app import specs\n")

    found = cycles(tmp_path, ["app"])

    assert list(found) == ["app"]
    assert describe(found) in (
        "app: app.inner.reader (l.2) -> app.specs -> app.specs (l.4) -> app.inner.reader",
        "app: app.specs (l.4) -> app.inner.reader -> app.inner.reader (l.2) -> app.specs",
    )
