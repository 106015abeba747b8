"""Tool search (issue 41) with hostile queries: the ranking is a parser of caller text.

A query is untrusted: the index cuts it at ``MAX_QUERY_CHARS`` so a megabyte of words costs what
a thousand characters cost; odd text (control characters, other scripts, only stop words, only
punctuation) finds nothing rather than failing; and a grant's ``allowed`` hides a tool however
exactly the query names it. docs/security.md, "Tool search" → "The ranking".
"""

from __future__ import annotations

import time

from mcp_protocol.search import MAX_QUERY_CHARS, ToolIndex
from tests.unit.search.catalog import tools


def test_a_megabyte_query_costs_what_its_first_thousand_characters_cost() -> None:
    index = ToolIndex.build(tools())
    huge = "create issue delete message upload file " * 30_000
    assert len(huge) > 1_000_000 > MAX_QUERY_CHARS
    started = time.perf_counter()
    hits = index.search(huge, 5)
    assert time.perf_counter() - started < 1.0
    assert [h.tool.name for h in hits] == [h.tool.name for h in index.search(huge[:MAX_QUERY_CHARS], 5)]


def test_odd_text_finds_nothing_and_raises_nothing() -> None:
    index = ToolIndex.build(tools())
    for query in ("", "the of and to", "!!! ### ...", "\x00\x1b[31m\u202e", "上传文件", "💥" * 500):
        assert index.search(query, 5) == []


def test_a_tool_outside_the_grant_is_hidden_even_when_named_exactly() -> None:
    index = ToolIndex.build(tools())
    hits = index.search("github_delete_repository", 10, allowed=lambda n: n != "github_delete_repository")
    assert "github_delete_repository" not in [h.tool.name for h in hits]
