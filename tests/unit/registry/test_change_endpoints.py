"""Issue 39: a registry change's bus message names the endpoints whose view it may alter.

A definition's change reaches ``/mcp`` (``CATCH_ALL``) and the virtual servers whose selection
allows it before the save or after; a server's own change reaches its endpoint only
(``kind: "servers"``). On the real memory bus, from real saves.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import connection, transaction
from django.test import override_settings
from django.test.utils import CaptureQueriesContext

from mcp_django.conf import mcp_settings
from mcp_protocol.endpoints import CATCH_ALL, MESSAGE_KEY
from registry.changes import publish as changes
from registry.models import Prompt, Resource, Skill, Tool, VirtualServer

from .test_changes import Listener, listen

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def memory_bus() -> Iterator[None]:
    with override_settings(
        MCP={**settings.MCP, "BUS": {"BACKEND": "mcp_protocol.bus.memory.MemoryBus", "OPTIONS": {}}}
    ):
        mcp_settings.backend("BUS")
        yield


def tool(name: str, tags: list[str] | None = None) -> Tool:
    return Tool.objects.create(name=name, kind="template", template_text="x", tags=tags or [])


def server(slug: str, **selection: Any) -> VirtualServer:
    return VirtualServer.objects.create(slug=slug, name=slug, **selection)


async def message_of(listener: Listener, kind: str) -> dict[str, Any]:
    """The next message of ``kind`` (a save of a server before it publishes ``servers``)."""
    while True:
        message = await listener.next()
        if message["kind"] == kind:
            return message


async def after(work: Any, kind: str = "tools") -> list[str] | None:
    listener = await listen()
    await sync_to_async(work)()
    message = await message_of(listener, kind)
    await listener.subscription.close()
    return message.get(MESSAGE_KEY)


async def test_a_tool_in_one_servers_selection_reaches_that_server_and_the_catch_all_only() -> None:
    def setup() -> Tool:
        server("a", tools=["t1"])
        server("b", tools=["other"])
        return tool("t1")

    t1 = await sync_to_async(setup)()
    t1.description = "edited"
    assert await after(t1.save) == [CATCH_ALL, "a"]


async def test_a_tool_tagged_with_an_included_tag_reaches_the_server_that_includes_it() -> None:
    def setup() -> Tool:
        server("a", tools=["t1"])
        server("b", include_tags=["x"])
        return tool("t2")

    t2 = await sync_to_async(setup)()
    t2.tags = ["x"]  # joins b
    assert await after(t2.save) == [CATCH_ALL, "b"]


async def test_an_excluded_tag_keeps_the_change_from_a_server_that_names_the_tool() -> None:
    def setup() -> Tool:
        server("a", tools=["t1"], exclude_tags=["secret"])
        return tool("t1", tags=["secret"])

    t1 = await sync_to_async(setup)()
    t1.description = "edited"
    assert await after(t1.save) == [CATCH_ALL]


async def test_a_rename_out_of_a_selection_reaches_the_server_it_left() -> None:
    def setup() -> Tool:
        server("a", tools=["old"])
        server("b", tools=["new"])
        server("c", tools=["unrelated"])
        return tool("old")

    renamed = await sync_to_async(setup)()
    renamed.name = "new"
    assert await after(renamed.save) == [CATCH_ALL, "a", "b"]


async def test_a_retag_out_of_an_included_tag_reaches_the_server_it_left_and_a_delete_too() -> None:
    def setup() -> Tool:
        server("b", include_tags=["x"])
        return tool("t", tags=["x"])

    t = await sync_to_async(setup)()
    t.tags = []
    assert await after(t.save) == [CATCH_ALL, "b"]
    fresh = await sync_to_async(Tool.objects.get)(name="t")
    assert await after(fresh.delete) == [CATCH_ALL]  # no longer tagged: b never served it


async def test_a_disabled_server_is_not_named() -> None:
    def setup() -> Tool:
        server("a", tools=["t1"], enabled=False)
        return tool("t1")

    t1 = await sync_to_async(setup)()
    t1.description = "edited"
    assert await after(t1.save) == [CATCH_ALL]


async def test_a_prompts_argument_reaches_where_its_prompt_is_served() -> None:
    def setup() -> Prompt:
        server("a", prompts=["p"])
        server("b", tools=["p"])  # a tool's name is not a prompt's
        return Prompt.objects.create(name="p", description="d")

    prompt = await sync_to_async(setup)()
    assert await after(lambda: prompt.arguments.create(name="arg"), "prompts") == [CATCH_ALL, "a"]
    argument = await sync_to_async(lambda: prompt.arguments.get())()
    assert await after(argument.delete, "prompts") == [CATCH_ALL, "a"]


async def test_resources_templates_and_skills_are_matched_by_uri_template_and_root() -> None:
    def setup() -> None:
        server("r", resources=["x:r"])
        server("s", skills=["skill://outer"])

    await sync_to_async(setup)()
    assert await after(lambda: Resource.objects.create(uri="x:r", name="r", text="t"), "resources") == [
        CATCH_ALL, "r"]
    # A nested skill's files are served by the skill enclosing it (SEP-2640).
    skill = Skill(path="outer/inner", frontmatter={"name": "inner", "description": "d"}, body="b")
    assert await after(skill.save, "resources") == [CATCH_ALL, "s"]


async def test_a_servers_own_change_reaches_its_endpoint_under_its_old_and_new_slug() -> None:
    a = await sync_to_async(server)("a", tools=["t1"])
    await sync_to_async(server)("b")
    a.tools = ["t1", "t2"]  # a tool added to a's selection: a's lists change, b's do not
    assert await after(a.save, "servers") == ["a"]
    a.slug = "renamed"
    assert await after(a.save, "servers") == ["a", "renamed"]
    assert await after(a.delete, "servers") == ["renamed"]


async def test_bulk_writes_name_the_endpoints_of_their_rows() -> None:
    await sync_to_async(server)("b", include_tags=["x"])
    await sync_to_async(server)("c", tools=["t"])
    await sync_to_async(tool)("t")
    assert await after(lambda: Tool.objects.filter(name="t").update(tags=["x"])) == [CATCH_ALL, "b", "c"]
    assert await after(lambda: Tool.objects.bulk_create([Tool(name="n", kind="template", template_text="x",
                                                               tags=["x"])])) == [CATCH_ALL, "b"]
    rows = await sync_to_async(lambda: list(Tool.objects.filter(name="t")))()
    rows[0].tags = []
    assert await after(lambda: Tool.objects.bulk_update(rows, ["tags"])) == [CATCH_ALL, "b", "c"]
    disable = VirtualServer.objects.filter(slug="b").update
    assert await after(lambda: disable(enabled=False), "servers") == ["b"]


async def test_an_update_by_expression_cannot_say_and_reaches_every_endpoint() -> None:
    from django.db.models import F

    await sync_to_async(tool)("t")
    assert await after(lambda: Tool.objects.update(name=F("description"))) is None


def test_one_transaction_reads_the_servers_once_however_many_rows_it_saves() -> None:
    server("a", tools=["t0"])
    with CaptureQueriesContext(connection) as queries, transaction.atomic():
        for i in range(5):
            tool(f"t{i}")
        Prompt.objects.create(name="p", description="d")
    reads = [q for q in queries.captured_queries if "registry_virtualserver" in q["sql"]]
    assert len(reads) == 1


def test_the_reconcilers_messages_name_no_endpoints_and_so_reach_every_one() -> None:
    # A change set republished from the database (reconcile.py) does not know whom it reached.
    message, = changes.messages({"tools": set()}, changes.Opened(1, "ab"))
    assert MESSAGE_KEY not in message
    assert "servers" in changes.KINDS


async def test_children_deleted_by_a_queryset_reach_their_prompt_with_one_read_of_the_prompts() -> None:
    def setup() -> Prompt:
        server("a", prompts=["p"])
        prompt = Prompt.objects.create(name="p", description="d")
        for name in ("x", "y", "z"):
            prompt.arguments.create(name=name)
        return prompt

    prompt = await sync_to_async(setup)()

    def delete_arguments() -> list[str]:
        with CaptureQueriesContext(connection) as queries, transaction.atomic():
            # As an import replaces a prompt's arguments: none of them has its prompt loaded.
            type(prompt.arguments.first()).objects.filter(prompt_id=prompt.pk).delete()
        return [q["sql"] for q in queries.captured_queries if 'FROM "registry_prompt"' in q["sql"]]

    listener = await listen()
    reads = await sync_to_async(delete_arguments)()
    assert len(reads) == 1  # the prompt, once, when the batch is published
    assert (await message_of(listener, "prompts"))[MESSAGE_KEY] == [CATCH_ALL, "a"]
    await listener.subscription.close()


def test_without_any_server_a_change_reads_no_parent() -> None:
    prompt = Prompt.objects.create(name="p", description="d")
    prompt.arguments.create(name="x")
    with CaptureQueriesContext(connection) as queries:
        type(prompt.arguments.first()).objects.filter(prompt_id=prompt.pk).delete()
    assert not [q for q in queries.captured_queries if 'FROM "registry_prompt"' in q["sql"]]
