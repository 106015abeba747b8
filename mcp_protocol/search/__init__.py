"""Tool search (issue 41): rank the tools of a snapshot for a query, on every worker, from the
snapshot alone (no database on the search path).

The contract the rest of the server codes against:

- ``ToolIndex.build(tools)`` indexes a snapshot's tools (name, title, description, argument names
  and descriptions, tags); ``index.updated(tools)`` returns the index of a new snapshot's tools,
  reusing what did not change (an edit re-indexes one tool, not ten thousand).
- ``index.search(query, limit, allowed)`` returns up to ``limit`` ``Hit``s, best first, among the
  tools ``allowed(name)`` accepts (the caller's view on its endpoint: selection ∩ grant), so a tool
  outside the view never appears, however well it matches.
- ``index_for(snapshot)`` is the cached index of a snapshot (one per snapshot version and mode).

The ranking lives in this package (``ranking`` modules); this first version is a plain term
overlap so the callers can be built against the contract while the ranking is.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from ..definitions import Snapshot, Tool

_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


@dataclass(frozen=True, slots=True)
class Hit:
    tool: Tool
    score: float


def words(text: str) -> list[str]:
    """Lower-case words of ``text``, names split on ``_``, ``.``, ``-`` and camelCase."""
    return [w.lower() for w in _WORD.findall(text or "")]


def _document(tool: Tool) -> list[str]:
    parts: list[str] = [tool.name, tool.title or "", tool.description or "", *tool.tags]
    properties = (tool.input_schema or {}).get("properties")
    if isinstance(properties, dict):
        for name, schema in properties.items():
            parts.append(str(name))
            if isinstance(schema, dict) and isinstance(schema.get("description"), str):
                parts.append(schema["description"])
    return words(" ".join(parts))


class ToolIndex:
    def __init__(self, tools: Sequence[Tool], documents: dict[str, frozenset[str]]) -> None:
        self.tools = tuple(tools)
        self._documents = documents

    @classmethod
    def build(cls, tools: Iterable[Tool]) -> ToolIndex:
        tools = tuple(tools)
        return cls(tools, {t.name: frozenset(_document(t)) for t in tools})

    def updated(self, tools: Iterable[Tool]) -> ToolIndex:
        tools = tuple(tools)
        old = {t.name: t for t in self.tools}
        documents = {t.name: (self._documents[t.name] if old.get(t.name) == t else frozenset(_document(t)))
                     for t in tools}
        return ToolIndex(tools, documents)

    def search(self, query: str, limit: int = 10, allowed: Callable[[str], bool] | None = None) -> list[Hit]:
        terms = set(words(query))
        hits = []
        for tool in self.tools:
            if allowed is not None and not allowed(tool.name):
                continue
            score = float(len(terms & self._documents[tool.name]))
            if score > 0:
                hits.append(Hit(tool, score))
        hits.sort(key=lambda h: (-h.score, h.tool.name))
        return hits[:limit]


_cache: dict[str, ToolIndex] = {}
_last: list[ToolIndex] = []


def index_for(snapshot: Snapshot) -> ToolIndex:
    """The index of ``snapshot``'s tools, built once per snapshot version (incrementally from the
    last one built)."""
    index = _cache.get(snapshot.version)
    if index is None:
        index = _last[0].updated(snapshot.tools) if _last else ToolIndex.build(snapshot.tools)
        _cache.clear()
        _cache[snapshot.version] = index
        _last[:] = [index]
    return index
