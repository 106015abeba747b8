"""``prune_history``: old versions and change sets go, never the latest version of a live row."""

from __future__ import annotations

import datetime
import io

import pytest
from django.core.management import call_command
from django.utils import timezone

from registry.models import ChangeSet, Prompt, Tool

pytestmark = pytest.mark.django_db(transaction=True)


def age_everything(days: int) -> None:
    then = timezone.now() - datetime.timedelta(days=days)
    for model in (Tool, Prompt, Prompt.arguments.rel.related_model):
        model.history.update(history_date=then)
    ChangeSet.objects.update(created_at=then)


def test_old_history_goes_but_every_live_row_keeps_its_latest_version() -> None:
    live = Tool.objects.create(name="live", kind="template", template_text="x")
    live.description = "edited"
    live.save()
    gone = Tool.objects.create(name="gone", kind="template", template_text="x")
    gone.delete()
    prompt = Prompt.objects.create(name="p")
    prompt.arguments.create(name="topic")
    age_everything(days=400)
    out = io.StringIO()
    call_command("prune_history", "--days", "30", stdout=out)
    assert "Deleted" in out.getvalue()
    [kept] = Tool.history.all()
    assert (kept.id, kept.description) == (live.pk, "edited")
    assert prompt.history.count() == 1 and prompt.arguments.get().history.count() == 1
    # The change sets the kept versions name stay; the others are gone.
    assert set(ChangeSet.objects.values_list("id", flat=True)) == {
        kept.changeset_id,
        prompt.history.get().changeset_id,
        prompt.arguments.get().history.get().changeset_id,
    }


def test_recent_history_and_a_dry_run_are_left_alone() -> None:
    row = Tool.objects.create(name="t", kind="template", template_text="x")
    row.description = "edited"
    row.save()
    call_command("prune_history", "--days", "30", stdout=io.StringIO())
    assert row.history.count() == 2
    age_everything(days=400)
    out = io.StringIO()
    call_command("prune_history", "--days", "30", "--dry-run", stdout=out)
    assert "Would delete 1 historicaltool" in out.getvalue() and row.history.count() == 2


def test_a_virtual_servers_history_is_pruned_like_a_definitions_and_keeps_its_change_sets() -> None:
    from registry.models import VirtualServer

    server = VirtualServer.objects.create(slug="a", name="A")
    server.tools = ["t"]
    server.save()
    then = timezone.now() - datetime.timedelta(days=400)
    VirtualServer.history.update(history_date=then)
    ChangeSet.objects.update(created_at=then)
    call_command("prune_history", "--days", "30", stdout=io.StringIO())  # no ProtectedError
    [kept] = VirtualServer.history.all()
    assert kept.tools == ["t"]
    assert list(ChangeSet.objects.values_list("id", flat=True)) == [kept.changeset_id]
