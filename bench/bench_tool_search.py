"""Tool search (issue 41) over 10,000 tools: search latency at c=16 on one worker per mode, the
cost of re-indexing after one edit, index memory, and rank-bm25 beside ours.

    .venv/bin/python bench/bench_tool_search.py [--tools 10000] [--searches 3200] [--out FILE]

The catalog: the relevance set's 530 real tools (tests/fixtures/search/) copied under new names
(``<name>_<k>``) up to ``--tools``; queries: the set's 300 queries (own words, paraphrased, intent), in turn.

- ``service``: one search at a time, its own time (p50, p99).
- ``c=16``: 16 asyncio tasks on one event loop, each searching in turn with the search run inline
  as a worker's handler runs it (it is CPU: a thread pool would only add GIL hand-offs); a
  search's latency is taken from the moment its task asks for the loop to the end of the search,
  so it includes the wait behind the other 15 (what a client of a busy worker sees).
- re-index: ``index.updated`` after one tool's description changed (median and max of 20 edits).
- memory: tracemalloc around ``ToolIndex.build`` (retained after the build; NumPy reports its
  buffers to tracemalloc), less the tools themselves.
- embedding mode: its 10,000 vectors are the 530 originals' vectors repeated (encoding 10,000
  texts in NumPy takes ~12 minutes of this machine; a search's cost does not depend on which
  vectors they are); its search encodes the query each time (the dominant cost).
- rank-bm25 (``BM25Okapi``, if installed): the same analysed terms, one document per tool.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import statistics
import sys
import time
import tracemalloc
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mcp_protocol.definitions import Tool  # noqa: E402
from mcp_protocol.search import ToolIndex, document  # noqa: E402
from mcp_protocol.search.text import terms  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures" / "search"


def catalog(size: int) -> list[Tool]:
    raw = json.loads((FIXTURES / "catalog.json").read_text())
    base = [
        Tool(
            name=t["name"],
            title=t["title"],
            description=t["description"],
            input_schema=t["inputSchema"],
            tags=tuple(t["tags"]),
        )
        for t in raw
    ]
    out = []
    for k in range(size):
        tool = base[k % len(base)]
        out.append(tool if k < len(base) else dataclasses.replace(tool, name=f"{tool.name}_{k // len(base)}"))
    return out


def queries() -> list[str]:
    qs = json.loads((FIXTURES / "queries.json").read_text())["queries"]
    return [q[kind] for q in qs for kind in ("own", "paraphrase", "intent")]


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))] * 1000


def service(index: ToolIndex, qs: list[str], n: int) -> list[float]:
    times = []
    for i in range(n):
        t0 = time.perf_counter()
        index.search(qs[i % len(qs)], 10)
        times.append(time.perf_counter() - t0)
    return times


async def concurrent(index: ToolIndex, qs: list[str], n: int, c: int = 16) -> tuple[list[float], float]:
    latencies: list[float] = []

    async def client(k: int) -> None:
        for i in range(k, n, c):
            t0 = time.perf_counter()
            await asyncio.sleep(0)  # queue behind the other clients, as a request waits for the loop
            index.search(qs[i % len(qs)], 10)
            latencies.append(time.perf_counter() - t0)

    start = time.perf_counter()
    await asyncio.gather(*(client(k) for k in range(c)))
    return latencies, n / (time.perf_counter() - start)


def reindex(index: ToolIndex, tools: list[Tool], edits: int = 20) -> list[float]:
    times = []
    for e in range(edits):
        k = (e * 997) % len(tools)
        edited = [
            *tools[:k],
            dataclasses.replace(tools[k], description=f"Edited {e}: {tools[k].description}"),
            *tools[k + 1 :],
        ]
        t0 = time.perf_counter()
        index.updated(edited)
        times.append(time.perf_counter() - t0)
    return times


def memory(tools: list[Tool]) -> tuple[float, float]:
    """MiB retained by a default-mode index (tracemalloc slows the build: it is timed apart)."""
    ToolIndex.build(tools[:50])  # warm the stem cache's first entries and imports out of the figure
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    index = ToolIndex.build(tools)
    retained = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    del index
    return retained / 2**20, 0.0


def rank_bm25(tools: list[Tool], qs: list[str], n: int) -> dict[str, float] | None:
    try:
        from rank_bm25 import BM25Okapi
    except ImportError:
        return None
    docs = [
        [t for t, c in document.counts(tool, weighted=False).items() for _ in range(int(c))] for tool in tools
    ]
    t0 = time.perf_counter()
    bm = BM25Okapi(docs)
    build = time.perf_counter() - t0
    times = []
    for i in range(n):
        t0 = time.perf_counter()
        scores = bm.get_scores(terms(qs[i % len(qs)]))
        sorted(range(len(scores)), key=scores.__getitem__, reverse=True)[:10]
        times.append(time.perf_counter() - t0)
    return {"build_ms": build * 1000, "p50": pct(times, 50), "p99": pct(times, 99)}


def embedding_index(tools: list[Tool], default: ToolIndex) -> ToolIndex | None:
    try:
        from mcp_protocol.search import embedding

        embedding.encoder()
    except (ImportError, RuntimeError):
        return None
    import numpy as np

    base = json.loads((FIXTURES / "catalog.json").read_text())
    originals = embedding.vectors(tools[: len(base)])
    vectors = np.concatenate([originals] * (len(tools) // len(base) + 1))[: len(tools)]
    return ToolIndex("embedding", list(default._slots), default._bm25, vectors)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tools", type=int, default=10_000)
    parser.add_argument("--searches", type=int, default=3200)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    tools, qs = catalog(args.tools), queries()
    mib, _ = memory(tools)
    rows: dict[str, Any] = {}
    t0 = time.perf_counter()
    default = ToolIndex.build(tools)
    build_s = time.perf_counter() - t0
    indexes: dict[str, ToolIndex | None] = {"default": default, "plain": ToolIndex.build(tools, "plain")}
    indexes["embedding"] = embedding_index(tools, default)
    for mode, index in indexes.items():
        if index is None:
            continue
        n = args.searches if mode != "embedding" else max(320, args.searches // 10)
        svc = service(index, qs, n)
        lat, rate = asyncio.run(concurrent(index, qs, n))
        rows[mode] = {
            "service_p50": pct(svc, 50),
            "service_p99": pct(svc, 99),
            "c16_p50": pct(lat, 50),
            "c16_p99": pct(lat, 99),
            "per_s": rate,
            "searches": n,
        }
    edit = reindex(default, tools)
    edit_emb = reindex(indexes["embedding"], tools, 5) if indexes["embedding"] is not None else None
    other = rank_bm25(tools, qs, 200)
    lines = [
        f"# Tool search over {len(tools):,} tools ({datetime.now(UTC):%Y-%m-%d %H:%M} UTC)",
        "",
        "`.venv/bin/python bench/bench_tool_search.py` (2 shared cores, other jobs running beside it).",
        "",
        "| mode | searches | service p50 ms | service p99 ms | c=16 p50 ms | c=16 p99 ms | searches/s |",
        "|---|---|---|---|---|---|---|",
    ]
    for mode, r in rows.items():
        lines.append(
            f"| {mode} | {r['searches']} | {r['service_p50']:.2f} | {r['service_p99']:.2f} | "
            f"{r['c16_p50']:.2f} | {r['c16_p99']:.2f} | {r['per_s']:.0f} |"
        )
    lines += [
        "",
        f"- Full build, default mode: {build_s * 1000:.0f} ms; index memory retained: {mib:.1f} MiB "
        "(tracemalloc; target < 50 MB without embeddings).",
        f"- Re-index after one edit, default mode: median {statistics.median(edit) * 1000:.1f} ms, "
        f"max {max(edit) * 1000:.1f} ms (20 edits; target < 200 ms).",
    ]
    if edit_emb:
        lines.append(
            f"- Re-index after one edit, embedding mode (encodes the edited tool): median "
            f"{statistics.median(edit_emb) * 1000:.1f} ms, max {max(edit_emb) * 1000:.1f} ms (5 edits)."
        )
    if other:
        lines.append(
            f"- rank-bm25 0.2.2 `BM25Okapi`, same terms, no field weights: build {other['build_ms']:.0f} ms, "
            f"a query p50 {other['p50']:.1f} ms, p99 {other['p99']:.1f} ms (200 queries, one at a time); "
            "no incremental update (an edit rebuilds)."
        )
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
