"""Every committed registry change is written down as one change set (who, from where, what), and a
worker whose bus never carried it finds it in the database and publishes it again
(``registry/changes/reconcile.py``): on the real memory bus, against the test database."""

from __future__ import annotations

import asyncio
import datetime
from collections.abc import Iterator

import pytest
from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import DatabaseError, transaction
from django.test import override_settings
from django.utils import timezone

from mcp_django.conf import mcp_settings
from mcp_protocol.bus.base import CHANGES
from registry.changes import authorship
from registry.changes.reconcile import Ledger, Reconciler
from registry.models import ChangeSet, Prompt, Resource, Tool
from registry.provider import RegistryProvider
from tests.support.polling import eventually

pytestmark = pytest.mark.django_db(transaction=True)

MEMORY_BUS = {"BACKEND": "mcp_protocol.bus.memory.MemoryBus", "OPTIONS": {}}


@pytest.fixture(autouse=True)
def memory_bus() -> Iterator[None]:
    with override_settings(MCP={**settings.MCP, "BUS": MEMORY_BUS}):
        yield


@pytest.fixture(autouse=True)
def no_earlier_change_sets() -> None:
    ChangeSet.objects.all().delete()  # the test database's migrate wrote one


def tool(name: str) -> Tool:
    return Tool(name=name, description="d", kind="template", template_text="x")


def test_one_transaction_is_one_change_set_naming_its_lists_and_resources() -> None:
    with transaction.atomic():
        tool("a").save()
        tool("b").save()
        Resource.objects.create(uri="x:one", name="one", text="t")
        Prompt.objects.create(name="p", description="d")
    [changeset] = ChangeSet.objects.all()
    assert changeset.kinds == ["tools", "resources", "prompts"]
    assert changeset.uris == ["x:one"]
    assert (changeset.source, changeset.actor, changeset.user_id) == ("shell", "system", None)


def test_a_save_outside_a_transaction_is_a_change_set_of_its_own_and_a_rollback_leaves_none() -> None:
    tool("alone").save()
    with pytest.raises(RuntimeError), transaction.atomic():
        tool("never").save()
        raise RuntimeError("roll back")
    assert [c.kinds for c in ChangeSet.objects.all()] == [["tools"]]


def test_a_rolled_back_savepoint_that_opened_the_change_set_leaves_the_next_change_its_own() -> None:
    with transaction.atomic():
        with pytest.raises(RuntimeError), transaction.atomic():
            tool("dropped").save()  # opens the change set, in this savepoint
            raise RuntimeError("roll back the savepoint")
        Resource.objects.create(uri="x:kept", name="kept", text="t")
    [changeset] = ChangeSet.objects.all()
    assert changeset.kinds == ["resources"] and changeset.uris == ["x:kept"]


def test_the_author_said_around_a_write_is_the_change_sets() -> None:
    author = authorship.Author(source="api", actor="token:ci")
    with authorship.authored(author), transaction.atomic():
        tool("by_api").save()
    assert ChangeSet.objects.values_list("source", "actor").get() == ("api", "token:ci")


def test_the_ledger_reports_each_unseen_change_set_once_and_moves_its_floor_past_settled_ones() -> None:
    now = timezone.now()
    old, recent = now - datetime.timedelta(seconds=120), now - datetime.timedelta(seconds=1)
    ledger = Ledger(floor=10, seen=[12], settle=60.0)
    ledger.saw(13)
    rows = [(11, old), (12, old), (13, recent), (14, recent)]
    assert ledger.missed(rows, now) == []  # unseen once: its message may be on its way
    assert ledger.floor == 10  # not past 11, a suspect
    assert ledger.missed(rows, now) == [11, 14]  # unseen by two checks in a row
    assert ledger.floor == 10  # not past 11 until its message published again is heard
    ledger.saw(11)
    ledger.saw(14)  # their republished messages, heard back by the reconciler's reader
    assert ledger.missed(rows, now) == []
    assert ledger.floor == 12  # 13 and 14 may still have lower ids committing after them
    assert ledger.missed([(15, old)], now) == []
    ledger.saw(15)  # its message came after the first check found it
    assert ledger.missed([(15, old)], now) == []
    assert ledger.missed([(16, old)], now) == []
    assert ledger.missed([(16, old)], now) == [16]  # settled but never seen: still reported


def test_a_missed_change_set_whose_message_is_never_heard_back_is_reported_again_at_every_check() -> None:
    # Issue 38 item 4: its publish failed (Redis down) or went out before any subscriber was back;
    # marking it handled then lost it for good.
    now = timezone.now()
    old = now - datetime.timedelta(seconds=120)
    ledger = Ledger(floor=10, settle=60.0)
    rows = [(11, old), (12, old)]
    assert ledger.missed(rows, now) == []
    assert ledger.missed(rows, now) == [11, 12]
    assert ledger.missed(rows, now) == [11, 12]  # published in vain: again
    assert ledger.floor == 10
    ledger.saw(12)
    assert ledger.missed(rows, now) == [11]
    ledger.saw(11)
    assert ledger.missed(rows, now) == []
    assert ledger.floor == 12


async def test_a_change_published_where_no_worker_listens_is_published_again_by_the_reconciler() -> None:
    provider = RegistryProvider()
    bus = mcp_settings.backend("BUS")
    heard = await bus.subscribe(CHANGES)
    reconciler = Reconciler(provider, bus, every=3600.0)  # checked by hand below
    await reconciler.start()
    try:
        # Another key prefix, a lost publish: the change is committed, the message goes elsewhere.
        with override_settings(MCP={**settings.MCP, "BUS": dict(MEMORY_BUS)}):
            assert mcp_settings.backend("BUS") is not bus
            await sync_to_async(Resource.objects.create)(uri="x:missed", name="missed", text="t")
        changeset, uid = await sync_to_async(lambda: ChangeSet.objects.values_list("pk", "uid").get())()
        assert await reconciler.check() == []  # its message may still be on its way
        assert await reconciler.check() == [changeset]
        message = await asyncio.wait_for(heard.__aiter__().__anext__(), 5.0)
        assert message["id"] == f"cs{uid.hex}.resources"  # the id its writer would have used
        assert message["uris"] == ["x:missed"] and message["changeset"] == changeset
        assert await reconciler.check() == []  # once
    finally:
        await reconciler.stop()
        await heard.close()


async def test_a_database_that_went_back_is_read_again_and_every_list_announced_once() -> None:
    # A restore writes no change set; the newest one the reconciler read is gone after it.
    provider = RegistryProvider()
    bus = mcp_settings.backend("BUS")
    heard = await bus.subscribe(CHANGES)
    reconciler = Reconciler(provider, bus, every=3600.0)
    await reconciler.start()
    try:
        await sync_to_async(tool("before_the_restore").save)()
        await asyncio.wait_for(heard.__aiter__().__anext__(), 5.0)
        assert await reconciler.check() == []
        gone = await sync_to_async(lambda: ChangeSet.objects.get().uid)()
        assert reconciler.newest is not None and reconciler.newest[1] == gone.hex

        def restore() -> None:  # to before the tool: its version and change set gone
            Tool.history.model.objects.all().delete()
            ChangeSet.objects.all().delete()

        await sync_to_async(restore)()
        assert await reconciler.check() == []
        announced = [await asyncio.wait_for(heard.__aiter__().__anext__(), 5.0) for _ in range(3)]
        kinds = ("tools", "resources", "prompts")
        assert [m["id"] for m in announced] == [f"gone{gone.hex}.{kind}" for kind in kinds]
        assert reconciler.newest is None
        assert await reconciler.check() == []  # once
    finally:
        await reconciler.stop()
        await heard.close()


async def test_a_change_whose_message_arrived_is_not_published_again() -> None:
    provider = RegistryProvider()
    bus = mcp_settings.backend("BUS")
    heard = await bus.subscribe(CHANGES)
    reconciler = Reconciler(provider, bus, every=3600.0)
    await reconciler.start()
    try:
        await sync_to_async(tool("heard").save)()
        await asyncio.wait_for(heard.__aiter__().__anext__(), 5.0)
        # The reconciler's reader takes the same message.
        await eventually(lambda: asyncio.sleep(0, bool(reconciler.ledger.seen)))
        assert await reconciler.check() == []
    finally:
        await reconciler.stop()
        await heard.close()


async def test_a_reconciler_that_cannot_read_change_sets_yet_serves_on_and_starts_when_it_can() -> None:
    provider = RegistryProvider()
    bus = mcp_settings.backend("BUS")
    reconciler = Reconciler(provider, bus, every=3600.0)

    def drop_table() -> None:
        from django.db import connection

        with connection.schema_editor() as editor:
            editor.delete_model(ChangeSet)

    def make_table() -> None:
        from django.db import connection

        with connection.schema_editor() as editor:
            editor.create_model(ChangeSet)

    await sync_to_async(drop_table)()
    try:
        await reconciler.start()  # a database not migrated this far: no error, it serves on
        with pytest.raises(DatabaseError):
            await reconciler.check()  # logged by the poll loop, tried again at the next
    finally:
        await sync_to_async(make_table)()
    assert await reconciler.check() == []  # primed now: what exists counts as seen
    await reconciler.stop()


async def test_a_missed_server_change_is_published_again_naming_no_endpoint_so_reaching_every_one() -> None:
    # Issue 39: the change set keeps the kinds ("servers" among them), not the endpoints, which are
    # worked out when its writer publishes; a republish reaches every endpoint (correct, wider).
    from mcp_protocol.endpoints import MESSAGE_KEY
    from registry.models import VirtualServer

    provider = RegistryProvider()
    bus = mcp_settings.backend("BUS")
    heard = await bus.subscribe(CHANGES)
    reconciler = Reconciler(provider, bus, every=3600.0)
    await reconciler.start()
    try:
        with override_settings(MCP={**settings.MCP, "BUS": dict(MEMORY_BUS)}):
            await sync_to_async(VirtualServer.objects.create)(slug="a", name="A")
        changeset = await sync_to_async(lambda: ChangeSet.objects.get())()
        assert changeset.kinds == ["servers"]
        assert await reconciler.check() == []
        assert await reconciler.check() == [changeset.pk]
        message = await asyncio.wait_for(heard.__aiter__().__anext__(), 5.0)
        assert (message["id"], message["kind"]) == (f"cs{changeset.uid.hex}.servers", "servers")
        assert MESSAGE_KEY not in message
    finally:
        await reconciler.stop()
        await heard.close()
