"""Opaque, signed, stable cursors (server/utilities/pagination.mdx; checklist O)."""

from __future__ import annotations

import pytest

from mcp_protocol.definitions import Tool
from mcp_protocol.errors import InvalidParams
from mcp_protocol.memory_provider import MemoryProvider
from mcp_protocol.pagination import Paginator

from .conftest import SECRET, call, initialized, make_server


async def _ok(args, ctx):
    return {"content": []}


def _provider(n: int) -> MemoryProvider:
    return MemoryProvider(tools=[(Tool(f"tool{i:02d}", {"type": "object"}), _ok) for i in range(n)])


async def _all_names(server, session):
    names, cursor, pages = [], None, 0
    while True:
        params = {"cursor": cursor} if cursor is not None else None
        result = (await call(server, session, "tools/list", params))["result"]
        names += [t["name"] for t in result["tools"]]
        pages += 1
        cursor = result.get("nextCursor")
        if cursor is None:
            return names, pages


async def test_lists_are_paged_by_page_size():
    server = make_server(_provider(7), page_size=3)
    session = await initialized(server)
    names, pages = await _all_names(server, session)
    assert names == [f"tool{i:02d}" for i in range(7)] and pages == 3


async def test_the_last_page_has_no_next_cursor():
    server = make_server(_provider(3), page_size=3)
    result = (await call(server, await initialized(server), "tools/list"))["result"]
    assert "nextCursor" not in result and len(result["tools"]) == 3


async def test_cursors_are_stable_when_items_are_inserted_before_the_position():
    provider = _provider(6)
    server = make_server(provider, page_size=3)
    session = await initialized(server)
    first = (await call(server, session, "tools/list"))["result"]
    assert [t["name"] for t in first["tools"]] == ["tool00", "tool01", "tool02"]
    provider.add_tool(Tool("aaa_new", {"type": "object"}), _ok, index=0)
    second = (await call(server, session, "tools/list", {"cursor": first["nextCursor"]}))["result"]
    assert [t["name"] for t in second["tools"]] == ["tool03", "tool04", "tool05"]


async def test_a_removed_cursor_item_resumes_at_its_old_position():
    provider = _provider(6)
    server = make_server(provider, page_size=3)
    session = await initialized(server)
    first = (await call(server, session, "tools/list"))["result"]
    provider.remove_tool("tool02")
    second = (await call(server, session, "tools/list", {"cursor": first["nextCursor"]}))["result"]
    assert [t["name"] for t in second["tools"]] == ["tool03", "tool04", "tool05"]


@pytest.mark.parametrize("cursor", ["", "garbage", "abc.def", 5, None.__class__.__name__])
async def test_forged_cursors_are_invalid_params(cursor):
    server = make_server(_provider(5), page_size=2)
    response = await call(server, await initialized(server), "tools/list", {"cursor": cursor})
    assert response["error"]["code"] == -32602


async def test_a_tampered_cursor_is_invalid_params():
    server = make_server(_provider(5), page_size=2)
    session = await initialized(server)
    cursor = (await call(server, session, "tools/list"))["result"]["nextCursor"]
    body, _, tag = cursor.partition(".")
    forged = Paginator(b"other-secret").encode("tools", "tool03", 3).partition(".")[0] + "." + tag
    assert (await call(server, session, "tools/list", {"cursor": forged}))["error"]["code"] == -32602
    assert (await call(server, session, "tools/list", {"cursor": body + "." + tag[:-2]}))["error"][
        "code"
    ] == -32602


async def test_a_cursor_from_another_list_is_invalid_params():
    server = make_server(_provider(5), page_size=2)
    session = await initialized(server)
    cursor = (await call(server, session, "tools/list"))["result"]["nextCursor"]
    assert (await call(server, session, "prompts/list", {"cursor": cursor}))["error"]["code"] == -32602


def test_an_expired_cursor_is_rejected():
    paginator = Paginator(SECRET, 2, max_age=60)
    cursor = paginator.encode("tools", "x", 1, now=0)
    with pytest.raises(InvalidParams):
        paginator.decode("tools", cursor)
    assert paginator.decode("tools", paginator.encode("tools", "x", 1)) == ("x", 1)
