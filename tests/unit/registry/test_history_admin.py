"""The history in the admin (Django's test client): a definition's versions with their diffs, a
revert by its button (guarded by the version the page showed), a deleted row restored, a change
set's page and its revert, refused whole with its conflicts."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from registry.changes.authorship import authored, of_user
from registry.models import ChangeSet, Tool
from registry.transfer.documents import import_document

pytestmark = pytest.mark.django_db(transaction=True)


def tool(name: str = "t", description: str = "first") -> Tool:
    return Tool.objects.create(
        name=name,
        description=description,
        kind="template",
        template_text="x",
        input_schema={"type": "object", "properties": {"a": {"type": "string"}}},
    )


def test_the_history_page_shows_each_version_with_its_json_diff_by_key(admin_client: Client) -> None:
    row = tool()
    row.input_schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    row.save()
    page = admin_client.get(reverse("admin:registry_tool_history", args=[row.pk]))
    assert page.status_code == 200
    html = page.content.decode()
    assert "<code>/input_schema/properties/a/type</code>" in html
    assert "&quot;string&quot;" in html and "&quot;integer&quot;" in html
    assert "Revert to this version" in html


def test_reverting_by_the_button_is_a_new_version_by_the_admin_user(
    admin_client: Client, admin_user: User
) -> None:
    row = tool()
    first = row.history.earliest().history_id
    row.description = "second"
    row.save()
    url = reverse("admin:registry_tool_revert", args=[row.pk, first])
    stale = admin_client.post(url, {"seen_version": "1"})  # the page showed version 1; it is at 2
    assert stale.status_code == 302
    assert Tool.objects.get(pk=row.pk).description == "second"
    assert admin_client.post(url, {"seen_version": "2"}).status_code == 302
    restored = Tool.objects.get(pk=row.pk)
    assert (restored.description, restored.version) == ("first", 3)
    changeset = restored.history.latest().changeset
    assert (changeset.source, changeset.actor) == ("admin", f"user:{admin_user.username}")


def test_a_deleted_rows_history_stays_and_its_revert_restores_it(admin_client: Client) -> None:
    row = tool("gone")
    pk, created = row.pk, row.history.earliest().history_id
    row.delete()
    page = admin_client.get(reverse("admin:registry_tool_history", args=[pk]))
    assert page.status_code == 200 and 'id="history-deleted"' in page.content.decode()
    admin_client.post(reverse("admin:registry_tool_revert", args=[pk, created]), {"seen_version": ""})
    assert Tool.objects.get(pk=pk).name == "gone"


def test_a_change_set_page_and_its_revert_whole_or_refused(admin_client: Client) -> None:
    import_document(
        {"tools": [{"name": n, "kind": "template", "template_text": "x"} for n in ("one", "two")]}
    )
    changeset = ChangeSet.objects.get(source="import").pk
    page = admin_client.get(reverse("admin:registry_changeset_change", args=[changeset]))
    assert page.status_code == 200
    html = page.content.decode()
    assert "Revert this change set" in html and "<code>/name</code>" in html
    two = Tool.objects.get(name="two")
    two.description = "edited since"
    two.save()
    refused = admin_client.post(reverse("admin:registry_changeset_revert", args=[changeset]), follow=True)
    assert "Tools two: changed since" in refused.content.decode()
    assert Tool.objects.filter(name__in=["one", "two"]).count() == 2
    two.description = ""
    two.save()  # back to what the import left: the revert may go ahead
    admin_client.post(reverse("admin:registry_changeset_revert", args=[changeset]))
    assert not Tool.objects.filter(name__in=["one", "two"]).exists()


def test_the_history_page_names_the_author_of_each_version(admin_client: Client, admin_user: User) -> None:
    row = tool("authored")
    with authored(of_user(admin_user, "admin")):
        row.description = "edited"
        row.save()
    html = admin_client.get(reverse("admin:registry_tool_history", args=[row.pk])).content.decode()
    assert f"by user:{admin_user.username} from admin" in html
