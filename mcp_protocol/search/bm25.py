"""BM25 over field-weighted term counts (a BM25F in the simple form), scored with NumPy.

Each tool is one document whose term counts are summed over its fields, each count multiplied by
its field's weight (``FIELDS``): a word in the name says more about the tool than the same word
in one argument's description. Length normalisation uses the weighted length, as BM25F does.

Scores are computed eagerly per (term, document) at indexing, without the idf, which depends on
the whole catalog and is applied per query: a query is then a handful of vector additions
(``scores[docs] += weight * idf * partial``), well under a millisecond for 10,000 tools, where a
pure-Python loop over the postings of a common word ("get", "list") took several.

Incremental: documents live in slots; a removed or edited tool's slot is marked dead and the
edited tool takes a new slot; only the postings of the terms the two versions hold are rebuilt,
and the postings mapping is copied shallowly, so the old index (still read by searches of the
previous snapshot) is never mutated. The average length is the one of the last full build (an
edit moves it by a hair); a full build happens again when dead slots pass a quarter of all.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

import numpy as np
from numpy.typing import NDArray

K1 = 1.2
B = 0.75

Posting = tuple[NDArray[np.int32], NDArray[np.float32]]


class Bm25:
    __slots__ = ("alive", "avgdl", "counts", "lengths", "live", "postings")

    def __init__(self, counts: list[Mapping[str, float] | None], avgdl: float | None = None) -> None:
        """``counts[slot]``: the weighted term counts of the document in ``slot`` (None: dead)."""
        self.counts = counts
        self.lengths = [sum(c.values()) if c else 0.0 for c in counts]
        self.alive = np.array([c is not None for c in counts], dtype=bool)
        self.live = int(self.alive.sum())
        if avgdl is None:
            avgdl = (sum(self.lengths) / self.live) if self.live else 1.0
        self.avgdl = avgdl or 1.0
        gathered: dict[str, tuple[list[int], list[float]]] = {}
        for slot, c in enumerate(counts):
            if c:
                norm = self._norm(slot)
                for term, tf in c.items():
                    docs, parts = gathered.setdefault(term, ([], []))
                    docs.append(slot)
                    parts.append(tf * (K1 + 1) / (tf + norm))
        self.postings: dict[str, Posting] = {
            t: (np.array(d, dtype=np.int32), np.array(p, dtype=np.float32)) for t, (d, p) in gathered.items()
        }

    def _norm(self, slot: int) -> float:
        return K1 * (1 - B + B * self.lengths[slot] / self.avgdl)

    def changed(self, dead: Iterable[int], added: list[Mapping[str, float]]) -> Bm25:
        """A new index with the slots ``dead`` removed and ``added`` appended; this one unchanged."""
        dead = sorted(set(dead))
        counts = list(self.counts)
        dirty: set[str] = set()
        for slot in dead:
            dirty.update(counts[slot] or ())
            counts[slot] = None
        first_new = len(counts)
        counts.extend(added)
        for c in added:
            dirty.update(c)
        live = self.live - len(dead) + len(added)
        if len(counts) - live > len(counts) // 4 + 16:
            return Bm25([c for c in counts if c is not None])  # compaction: slots renumbered
        new = object.__new__(Bm25)
        new.counts = counts
        new.lengths = self.lengths + [sum(c.values()) for c in added]
        new.alive = np.concatenate([self.alive, np.ones(len(added), dtype=bool)])
        if dead:
            new.alive[dead] = False
        new.live = live
        new.avgdl = self.avgdl
        new.postings = dict(self.postings)
        dead_set = np.array(dead, dtype=np.int32)
        for term in dirty:
            docs, parts = self.postings.get(term, (np.empty(0, np.int32), np.empty(0, np.float32)))
            if dead:
                keep = ~np.isin(docs, dead_set)
                docs, parts = docs[keep], parts[keep]
            extra = [(first_new + i, c[term]) for i, c in enumerate(added) if term in c]
            if extra:
                docs = np.concatenate([docs, np.array([s for s, _ in extra], dtype=np.int32)])
                parts = np.concatenate([parts, np.array(
                    [tf * (K1 + 1) / (tf + new._norm(s)) for s, tf in extra], dtype=np.float32)])
            if len(docs):
                new.postings[term] = (docs, parts)
            else:
                new.postings.pop(term, None)
        return new

    def idf(self, term: str) -> float:
        posting = self.postings.get(term)
        if posting is None:
            return 0.0
        df = len(posting[0])
        return math.log(1 + (self.live - df + 0.5) / (df + 0.5))

    def scores(self, weights: Mapping[str, float]) -> NDArray[np.float32]:
        """Score of every slot for a query whose terms carry ``weights`` (dead slots score 0)."""
        scores = np.zeros(len(self.counts), dtype=np.float32)
        for term, weight in weights.items():
            posting = self.postings.get(term)
            if posting is not None:
                scores[posting[0]] += np.float32(weight * self.idf(term)) * posting[1]
        return scores
