"""Committed changes → one message per kind on the real memory bus; rollbacks publish nothing."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import transaction
from django.test import override_settings

from mcp_django.conf import mcp_settings
from mcp_protocol.bus.base import CHANGES, Subscription
from mcp_protocol.bus.memory import MemoryBus
from registry.models import ChangeSet, Prompt, Resource, Tool
from registry.provider import RegistryProvider

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def memory_bus() -> Iterator[None]:
    with override_settings(
        MCP={**settings.MCP, "BUS": {"BACKEND": "mcp_protocol.bus.memory.MemoryBus", "OPTIONS": {}}}
    ):
        assert isinstance(mcp_settings.backend("BUS"), MemoryBus)
        yield


class Listener:
    def __init__(self, subscription: Subscription) -> None:
        self.subscription = subscription
        self.messages: AsyncIterator[dict[str, Any]] = subscription.__aiter__()

    async def next(self, timeout: float = 5.0) -> dict[str, Any]:
        return await asyncio.wait_for(self.messages.__anext__(), timeout)


async def listen() -> Listener:
    return Listener(await mcp_settings.backend("BUS").subscribe(CHANGES))


def tool(name: str) -> Tool:
    return Tool(name=name, description="d", kind="template", template_text="x")


async def test_saving_a_tool_publishes_tools_list_changed_after_commit() -> None:
    listener = await listen()
    await sync_to_async(tool("t1").save)()
    message = await listener.next()
    assert message["kind"] == "tools" and message["uris"] == []
    # Named after its change set (written down in the same transaction), the same for any publisher:
    # by its uid, which no other database's change set has (its id does repeat: issue 38 item 6).
    uid = await sync_to_async(lambda: ChangeSet.objects.get(pk=message["changeset"]).uid)()
    assert message["id"] == f"cs{uid.hex}.tools"
    await listener.subscription.close()


async def test_a_transaction_that_rolls_back_publishes_nothing() -> None:
    listener = await listen()

    def rolled_back() -> None:
        with pytest.raises(RuntimeError), transaction.atomic():
            tool("never").save()
            Resource.objects.create(uri="x:never", name="never", text="t")
            raise RuntimeError("roll back")

    await sync_to_async(rolled_back)()
    # A later committed change is the first message: nothing was published for the rollback.
    await sync_to_async(Prompt.objects.create)(name="marker", description="d")
    assert (await listener.next())["kind"] == "prompts"
    with pytest.raises(TimeoutError):
        await listener.next(timeout=0.2)
    assert not await sync_to_async(Tool.objects.filter(name="never").exists)()


async def test_changes_in_one_transaction_are_coalesced_into_one_message_per_kind() -> None:
    listener = await listen()

    def many() -> None:
        with transaction.atomic():
            for i in range(5):
                tool(f"t{i}").save()
            Resource.objects.create(uri="x:a", name="a", text="1")
            Resource.objects.create(uri="x:b", name="b", text="2")

    await sync_to_async(many)()
    messages = [await listener.next(), await listener.next()]
    assert sorted((m["kind"], tuple(m["uris"])) for m in messages) == [
        ("resources", ("x:a", "x:b")),
        ("tools", ()),
    ]
    with pytest.raises(TimeoutError):
        await listener.next(timeout=0.2)


async def test_after_a_rolled_back_transaction_the_next_one_still_publishes() -> None:
    listener = await listen()

    def both() -> None:
        with pytest.raises(RuntimeError), transaction.atomic():
            tool("lost").save()
            raise RuntimeError
        with transaction.atomic():
            tool("kept").save()

    await sync_to_async(both)()
    assert (await listener.next())["kind"] == "tools"
    assert await sync_to_async(lambda: list(Tool.objects.values_list("name", flat=True)))() == ["kept"]


async def test_resource_changes_name_their_uris_including_a_renamed_one() -> None:
    resource = await sync_to_async(Resource.objects.create)(uri="x:old", name="r", text="1")
    listener = await listen()
    resource.uri = "x:new"
    await sync_to_async(resource.save)()
    assert (await listener.next())["uris"] == ["x:new", "x:old"]
    await sync_to_async(resource.delete)()
    message = await listener.next()
    assert message["kind"] == "resources" and message["uris"] == ["x:new"]


async def test_inline_children_and_cascading_deletes_publish_the_prompt_kind_once() -> None:
    prompt = await sync_to_async(Prompt.objects.create)(name="p", description="d")
    listener = await listen()
    await sync_to_async(prompt.arguments.create)(name="a")
    assert (await listener.next())["kind"] == "prompts"
    await sync_to_async(prompt.messages.create)(content={"type": "text", "text": "x"})
    assert (await listener.next())["kind"] == "prompts"
    await sync_to_async(prompt.delete)()  # the prompt and its children: one atomic delete
    assert (await listener.next())["kind"] == "prompts"
    with pytest.raises(TimeoutError):
        await listener.next(timeout=0.2)


async def test_queryset_bulk_writes_publish_too() -> None:
    listener = await listen()
    await sync_to_async(Tool.objects.bulk_create)([tool("b1"), tool("b2")])
    assert (await listener.next())["kind"] == "tools"
    await sync_to_async(Tool.objects.filter(name="b1").update)(enabled=False)
    assert (await listener.next())["kind"] == "tools"
    await sync_to_async(Resource.objects.bulk_create)([Resource(uri="x:bulk", name="b", text="t")])
    assert (await listener.next())["uris"] == ["x:bulk"]
    await sync_to_async(Resource.objects.filter(uri="x:bulk").update)(text="changed")
    assert (await listener.next())["uris"] == ["x:bulk"]
    assert await sync_to_async(Tool.objects.filter(name="nothing").update)(enabled=False) == 0
    with pytest.raises(TimeoutError):  # no rows changed, nothing published
        await listener.next(timeout=0.2)


def test_a_committed_change_marks_in_process_providers_stale_for_sync_callers() -> None:
    provider = RegistryProvider()
    assert provider.snapshot().tools == ()
    tool("fresh").save()
    assert [t.name for t in provider.snapshot().tools] == ["fresh"]
    with pytest.raises(RuntimeError), transaction.atomic():
        tool("rolled_back").save()
        raise RuntimeError
    assert [t.name for t in provider.snapshot().tools] == ["fresh"]


async def assert_nothing_more(listener: Listener) -> None:
    """Last check of a listener: a timed-out wait closes its iterator."""
    with pytest.raises(TimeoutError):
        await listener.next(timeout=0.2)


async def test_a_rolled_back_savepoint_drops_its_changes_while_the_outer_transaction_publishes() -> None:
    listener = await listen()

    def work() -> None:
        with transaction.atomic():
            tool("outer").save()
            with pytest.raises(RuntimeError), transaction.atomic():
                Prompt.objects.create(name="inner", description="d")
                Resource.objects.create(uri="x:inner", name="inner", text="t")
                raise RuntimeError("roll back the savepoint only")
            Resource.objects.create(uri="x:outer", name="outer", text="t")

    await sync_to_async(work)()
    messages = sorted([await listener.next(), await listener.next()], key=lambda m: m["kind"])
    assert [(m["kind"], m["uris"]) for m in messages] == [("resources", ["x:outer"]), ("tools", [])]
    await assert_nothing_more(listener)
    assert not await sync_to_async(Prompt.objects.exists)()


async def test_a_transaction_whose_only_changes_were_rolled_back_in_a_savepoint_publishes_nothing() -> None:
    listener = await listen()

    def work() -> None:
        with transaction.atomic():
            with pytest.raises(RuntimeError), transaction.atomic():
                tool("inner").save()
                raise RuntimeError
            Tool.objects.filter(name="nobody").update(enabled=False)  # touches no row

    await sync_to_async(work)()
    await sync_to_async(Prompt.objects.create)(name="marker", description="d")
    assert (await listener.next())["kind"] == "prompts"  # the marker, and nothing before it
    await assert_nothing_more(listener)


async def test_nested_savepoints_publish_exactly_the_changes_that_survived() -> None:
    listener = await listen()

    def work() -> None:
        with transaction.atomic():
            with transaction.atomic():  # the transaction's first change is in a savepoint that commits
                Resource.objects.create(uri="x:one", name="one", text="1")
                with pytest.raises(RuntimeError), transaction.atomic():
                    Resource.objects.create(uri="x:two", name="two", text="2")
                    Prompt.objects.create(name="lost", description="d")
                    raise RuntimeError
            tool("outer").save()
            with pytest.raises(RuntimeError), transaction.atomic():
                with transaction.atomic():
                    tool("lost").save()
                    Resource.objects.filter(uri="x:one").update(text="lost")
                raise RuntimeError
            with transaction.atomic():
                Resource.objects.create(uri="x:three", name="three", text="3")

    await sync_to_async(work)()
    messages = sorted([await listener.next(), await listener.next()], key=lambda m: m["kind"])
    assert [(m["kind"], m["uris"]) for m in messages] == [("resources", ["x:one", "x:three"]), ("tools", [])]
    await assert_nothing_more(listener)
    names = await sync_to_async(lambda: sorted(Tool.objects.values_list("name", flat=True)))()
    assert names == ["outer"]


def _registry_parent() -> str:
    """The migration before the registry's newest one."""
    from django.db import connection
    from django.db.migrations.loader import MigrationLoader

    graph = MigrationLoader(connection).graph
    (leaf,) = graph.leaf_nodes("registry")
    (parent,) = [name for app, name in graph.node_map[leaf].parents if app == "registry"]
    return parent


async def test_migrate_publishes_every_kind_so_workers_rebuild_and_a_no_op_migrate_publishes_nothing() -> (
    None
):
    from django.core.management import call_command

    listener = await listen()
    # Unapplying and reapplying a registry migration goes through historical models, whose
    # signals the live receivers never see; post_migrate covers it. The newest migration only:
    # unapplying all of them and applying them again took a minute of the suite for the same proof.
    parent = await sync_to_async(_registry_parent)()
    await sync_to_async(call_command)("migrate", "registry", parent, verbosity=0)
    assert sorted([(await listener.next())["kind"] for _ in range(3)]) == ["prompts", "resources", "tools"]
    # Every app: unapplying a registry migration also unapplies those of other apps depending on it.
    await sync_to_async(call_command)("migrate", verbosity=0)
    assert sorted([(await listener.next())["kind"] for _ in range(3)]) == ["prompts", "resources", "tools"]
    await sync_to_async(call_command)("migrate", verbosity=0)  # nothing to apply
    await sync_to_async(Resource.objects.create)(uri="x:marker", name="marker", text="t")
    assert (await listener.next())["uris"] == ["x:marker"]  # the marker, and nothing before it
    await assert_nothing_more(listener)
