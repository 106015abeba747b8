"""The version guard of registry rows (``registry/models/concurrency.py``) and the admin's use of it: a
form saved after another edit committed is refused with what changed, instead of silently
overwriting that edit."""

from __future__ import annotations

import json

import pytest
from django.db import transaction
from django.test import Client
from django.urls import reverse

from registry.models import Tool
from registry.models.concurrency import VersionConflict

from .conftest import tool_form

pytestmark = pytest.mark.django_db


def make_tool() -> Tool:
    tool = Tool(name="t", description="d", kind="template", template_text="x")
    tool.save()
    return tool


def test_saving_a_stale_copy_raises_and_keeps_the_other_edit() -> None:
    mine, theirs = make_tool(), Tool.objects.get(name="t")
    theirs.description = "theirs"
    theirs.save()
    assert theirs.version == 2
    mine.description = "mine"
    with pytest.raises(VersionConflict) as info, transaction.atomic():
        mine.save()
    assert (info.value.expected, info.value.current) == (1, 2)
    assert mine.version == 1  # unchanged: the caller may reload and retry
    assert Tool.objects.get().description == "theirs"


def test_saving_a_copy_of_a_deleted_row_raises_instead_of_inserting_it_again() -> None:
    mine = make_tool()
    Tool.objects.all().delete()
    mine.description = "mine"
    with pytest.raises(VersionConflict) as info, transaction.atomic():
        mine.save()
    assert info.value.current is None
    assert not Tool.objects.exists()


def test_update_fields_saves_bump_the_version_too() -> None:
    tool = make_tool()
    tool.title = "x"
    tool.save(update_fields=["title"])
    assert Tool.objects.get().version == 2


def test_an_admin_form_saved_after_another_edit_is_refused_with_what_changed(admin_client: Client) -> None:
    tool = make_tool()
    url = reverse("admin:registry_tool_change", args=[tool.pk])
    page = admin_client.get(url).content.decode()
    assert 'name="opened_version" value="1"' in page  # the hidden field the form comes back with
    Tool.objects.filter(pk=tool.pk).update(description="saved by someone else")  # version 2
    form = tool_form(name="t", description="d", template_text="mine", opened_version="1",
                     input_schema=json.dumps({"type": "object", "properties": {}}))
    answer = admin_client.post(url, form)
    assert answer.status_code == 200  # the form again, with the error
    text = answer.content.decode()
    assert "Someone else saved this tool after you opened it" in text
    assert "saved by someone else" in text  # the stored value that differs from the form
    stored = Tool.objects.get()
    assert (stored.description, stored.template_text, stored.version) == ("saved by someone else", "x", 2)
    # With the current version the same edit goes through.
    form["opened_version"] = "2"
    form["description"] = "saved by someone else"
    assert admin_client.post(url, form).status_code == 302
    assert Tool.objects.get().template_text == "mine"
