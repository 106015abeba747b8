"""Tool search (issue 41): rank the tools of a snapshot for a query, on every worker, from the
snapshot alone (no database on the search path).

The contract the rest of the server codes against:

- ``ToolIndex.build(tools, mode=...)`` indexes a snapshot's tools (name, title, description,
  argument names and descriptions, tags); ``index.updated(tools)`` returns the index of a new
  snapshot's tools, reusing what did not change (an edit re-indexes one tool, not ten thousand).
- ``index.search(query, limit, allowed)`` returns up to ``limit`` ``Hit``s, best first (ties by
  name), among the tools ``allowed(name)`` accepts (the caller's view on its endpoint: selection ∩
  grant), so a tool outside the view never appears, however well it matches.
- ``index_for(snapshot, mode=...)`` is the cached index of a snapshot (one per snapshot version
  and mode), built incrementally from the last one of that mode.

Modes (``MODES``): ``default`` is BM25 over field-weighted counts (document.py, bm25.py) with
stemming and split names (text.py) and query expansion by related words (synonyms.py); ``plain``
is the textbook BM25 (unweighted fields, no stemming, no expansion), kept as the yardstick the
relevance test measures the others against; ``embedding`` (embedding.py, optional dependencies
``search-embedding``) adds a sentence-embedding model's cosine to the default ranking.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from ..definitions import Snapshot, Tool
from . import document
from .bm25 import Bm25
from .synonyms import expand
from .text import terms, words

__all__ = ["MAX_QUERY_CHARS", "MODES", "Hit", "ToolIndex", "index_for", "words"]

MODES = ("default", "plain", "embedding")
# A query past this is cut: a search's cost grows with its words, and a caller's query is
# untrusted input (docs/security.md, "Tool search"). Longer than any honest request for a tool.
MAX_QUERY_CHARS = 1000


@dataclass(frozen=True, slots=True)
class Hit:
    tool: Tool
    score: float


def _counts(tool: Tool, mode: str) -> dict[str, float]:
    if mode == "plain":
        return document.counts(tool, weighted=False, analyse=document.plain_words)
    return document.counts(tool)


class ToolIndex:
    """An immutable index of one snapshot's tools; ``updated`` makes the next one."""

    def __init__(self, mode: str, slots: list[Tool | None], bm25: Bm25, extra: object = None) -> None:
        self.mode = mode
        self._slots = slots
        self._slot_of = {t.name: i for i, t in enumerate(slots) if t is not None}
        self._bm25 = bm25
        self._extra = extra  # the embedding mode's vectors (embedding.py)

    @property
    def tools(self) -> tuple[Tool, ...]:
        return tuple(t for t in self._slots if t is not None)

    @classmethod
    def build(cls, tools: Iterable[Tool], mode: str = "default") -> ToolIndex:
        if mode not in MODES:
            raise ValueError(f"unknown tool search mode {mode!r} (one of {', '.join(MODES)})")
        slots: list[Tool | None] = list(tools)
        index = cls(mode, slots, Bm25([_counts(t, mode) for t in slots if t is not None]))
        if mode == "embedding":
            from .embedding import vectors

            index._extra = vectors(slots)
        return index

    def updated(self, tools: Iterable[Tool]) -> ToolIndex:
        """The index of ``tools``: unchanged tools keep their slot; removed and edited ones are
        re-indexed alone (or everything, when too many slots went dead: bm25.py)."""
        tools = list(tools)
        seen: set[str] = set()
        dead: list[int] = []
        added: list[Tool] = []
        for tool in tools:
            seen.add(tool.name)
            slot = self._slot_of.get(tool.name)
            if slot is None:
                added.append(tool)
            else:
                old = self._slots[slot]
                if old is not tool and old != tool:
                    dead.append(slot)
                    added.append(tool)
        dead.extend(slot for name, slot in self._slot_of.items() if name not in seen)
        if not dead and not added:
            return self
        bm25 = self._bm25.changed(dead, [_counts(t, self.mode) for t in added])
        if len(bm25.counts) != len(self._slots) + len(added):  # compacted: slots renumbered
            return self._compacted(tools, {id(t) for t in added})
        slots = list(self._slots)
        for slot in dead:
            slots[slot] = None
        slots.extend(added)
        extra = self._extra
        if self.mode == "embedding":
            from .embedding import vectors_updated

            extra = vectors_updated(self._extra, dead, added)
        return ToolIndex(self.mode, slots, bm25, extra)

    def _compacted(self, tools: list[Tool], added: set[int]) -> ToolIndex:
        """A full rebuild of the BM25 side; the embedding side keeps the vectors of unchanged
        tools (encoding 10,000 tools again would take minutes)."""
        slots: list[Tool | None] = list(tools)
        index = ToolIndex(self.mode, slots, Bm25([_counts(t, self.mode) for t in tools]))
        if self.mode == "embedding":
            from .embedding import vectors_reused

            kept = {t.name: self._slot_of[t.name] for t in tools if id(t) not in added}
            index._extra = vectors_reused(self._extra, kept, tools)
        return index

    def scores(self, query: str) -> np.ndarray:
        """Every slot's score for ``query`` (0: no match, dead slots 0)."""
        if self.mode == "plain":
            weights: dict[str, float] = {}
            for word in words(query):
                weights[word] = weights.get(word, 0.0) + 1.0
            return self._bm25.scores(weights)
        scores = self._bm25.scores(expand(terms(query)))
        if self.mode == "embedding":
            from .embedding import hybrid

            scores = hybrid(scores, self._extra, query, self._bm25.alive)
        return scores

    def search(self, query: str, limit: int = 10, allowed: Callable[[str], bool] | None = None) -> list[Hit]:
        if limit <= 0:
            return []
        scores = self.scores(query[:MAX_QUERY_CHARS])
        candidates = np.flatnonzero(scores > 0)
        # Sorting every match of a common word costs more than the scoring: sort only the best
        # ``head`` (argpartition), and the rest only when grants or ties need them.
        head = max(8 * limit, 64)
        if len(candidates) > head:
            best = candidates[np.argpartition(-scores[candidates], head)[:head]]
            hits, complete = self._collect(best, scores, limit, allowed)
            if not complete:
                hits, _ = self._collect(candidates, scores, limit, allowed)
        else:
            hits, _ = self._collect(candidates, scores, limit, allowed)
        hits.sort(key=lambda h: (-h.score, h.tool.name))
        return [Hit(h.tool, round(h.score, 4)) for h in hits[:limit]]

    def _collect(self, slots: np.ndarray, scores: np.ndarray, limit: int,
                 allowed: Callable[[str], bool] | None) -> tuple[list[Hit], bool]:
        """The allowed hits among ``slots``, best first, until ``limit`` and the ties of the last;
        complete is False when the slots ran out before that could be known."""
        order = slots[np.argsort(-scores[slots], kind="stable")]
        hits: list[Hit] = []
        # ``allowed`` is called only on the best candidates, not on every tool: a grant check per
        # tool of 10,000 would cost more than the ranking. Candidates tied with the last kept one
        # are taken too, so the tie-break by name sees all of them.
        for slot in order.tolist():
            score = float(scores[slot])
            if len(hits) >= limit and score < hits[-1].score:
                return hits, True
            tool = self._slots[slot]
            if tool is not None and (allowed is None or allowed(tool.name)):
                hits.append(Hit(tool, score))
        return hits, False


_cache: dict[tuple[str, str], ToolIndex] = {}
_last: dict[str, ToolIndex] = {}


def index_for(snapshot: Snapshot, mode: str = "default") -> ToolIndex:
    """The index of ``snapshot``'s tools in ``mode``, built once per snapshot version (incrementally
    from the last one built in that mode)."""
    key = (snapshot.version, mode)
    index = _cache.get(key)
    if index is None:
        last = _last.get(mode)
        index = last.updated(snapshot.tools) if last is not None else ToolIndex.build(snapshot.tools, mode)
        for stale in [k for k in _cache if k[1] == mode]:
            del _cache[stale]
        _cache[key] = index
        _last[mode] = index
    return index
