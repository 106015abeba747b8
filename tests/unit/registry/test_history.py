"""Every version of every definition, with who and from where: edits and deletes through the real
admin forms (Django's test client), a prompt changed with its inlines, an import, a shell save."""

from __future__ import annotations

import io
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from registry.models import ChangeSet, Prompt, Tool
from registry.transfer.documents import import_document
from tests.support.admin_client import form_fields

# Real transactions: a change set is what one transaction wrote (a test wrapped in one would be one).
pytestmark = pytest.mark.django_db(transaction=True)


def tool(name: str = "t", **fields: Any) -> Tool:
    return Tool.objects.create(name=name, description="d", kind="template", template_text="x", **fields)


def submitted(client: Client, url: str, **changes: str) -> Any:
    """POST the admin form at ``url`` as a browser would, with ``changes``."""
    page = client.get(url)
    assert page.status_code == 200
    fields = [(k, v) for k, v in form_fields(page.content.decode()) if k not in changes]
    data: dict[str, Any] = {}
    for key, value in [*fields, *changes.items(), ("_save", "Save")]:
        data.setdefault(key, []).append(value)
    return client.post(url, data)


def test_an_admin_edit_is_a_version_by_its_user_from_the_admin(
    admin_client: Client, admin_user: User
) -> None:
    row = tool(annotations={"readOnlyHint": True})
    url = reverse("admin:registry_tool_change", args=[row.pk])
    saved = submitted(admin_client, url, description="Edited in the admin")
    assert saved.status_code == 302, saved.content.decode()[:2000]
    latest = row.history.latest()
    assert latest.history_type == "~" and latest.description == "Edited in the admin"
    assert latest.annotations == {"readOnlyHint": True}  # the full state, not only what changed
    assert latest.history_user == admin_user
    assert (latest.changeset.source, latest.changeset.actor) == ("admin", f"user:{admin_user.username}")
    assert [h.history_type for h in row.history.all()] == ["~", "+"]


def test_an_admin_delete_is_a_version_too(admin_client: Client) -> None:
    row = tool()
    url = reverse("admin:registry_tool_delete", args=[row.pk])
    assert admin_client.post(url, {"post": "yes"}).status_code == 302
    assert not Tool.objects.filter(pk=row.pk).exists()
    gone = Tool.history.filter(id=row.pk).latest()
    assert gone.history_type == "-" and gone.name == "t" and gone.changeset.source == "admin"


def test_a_prompt_changed_with_its_inlines_is_one_change_set(admin_client: Client) -> None:
    prompt = Prompt.objects.create(name="p", description="Original")
    prompt.arguments.create(name="topic", required=True)
    prompt.messages.create(role="user", content={"type": "text", "text": "About {{ topic }}"})
    url = reverse("admin:registry_prompt_change", args=[prompt.pk])
    saved = submitted(admin_client, url, **{"description": "Edited", "arguments-0-name": "subject"})
    assert saved.status_code == 302, saved.content.decode()[:2000]
    [changeset] = ChangeSet.objects.filter(source="admin")
    versions = [
        *Prompt.history.filter(changeset=changeset),
        *prompt.arguments.model.history.filter(changeset=changeset),
    ]
    assert {(type(v).__name__, v.history_type) for v in versions} == {
        ("HistoricalPrompt", "~"),
        ("HistoricalPromptArgument", "~"),
    }
    assert prompt.arguments.model.history.filter(changeset=changeset).get().name == "subject"


def test_an_import_is_one_change_set_from_the_import_with_a_version_of_every_row() -> None:
    document = {
        "tools": [{"name": f"imported_{i}", "kind": "template", "template_text": "x"} for i in range(3)],
        "prompts": [
            {
                "name": "imported_prompt",
                "arguments": [{"name": "a"}],
                "messages": [{"role": "user", "content": {"type": "text", "text": "{{ a }}"}}],
            }
        ],
    }
    outcome = import_document(document)
    assert not outcome.errors, outcome.errors
    [changeset] = ChangeSet.objects.filter(source="import")
    assert changeset.actor == "system" and changeset.kinds == ["tools", "prompts"]
    assert Tool.history.filter(changeset=changeset).count() == 3
    prompt = Prompt.objects.get(name="imported_prompt")
    assert prompt.arguments.model.history.filter(changeset=changeset, history_type="+").count() == 1
    assert prompt.messages.model.history.filter(changeset=changeset, history_type="+").count() == 1


def test_a_shell_save_outside_a_transaction_is_a_version_in_a_change_set_of_its_own() -> None:
    row = tool("from_shell")
    row.description = "again"
    row.save()
    first, second = row.history.order_by("history_id")
    assert first.changeset != second.changeset
    assert (second.changeset.source, second.changeset.actor) == ("shell", "system")
    assert second.changeset.kinds == ["tools"]


def test_a_command_that_creates_tools_is_one_change_set_from_the_command_with_their_versions() -> None:
    call_command("seed_tools", "--count", "3", stdout=io.StringIO())
    [changeset] = ChangeSet.objects.filter(source="command")
    assert Tool.history.filter(changeset=changeset, history_type="+").count() == 3


def test_a_version_is_the_full_state_with_what_simple_history_reads_from_the_instance() -> None:
    """``RegistryHistory`` writes the row itself (one prepared INSERT): every tracked column, and
    the library's per-save inputs (``_history_date``, ``_change_reason``, ``_history_user``,
    ``skip_history_when_saving``, ``SIMPLE_HISTORY_ENABLED``) read as the library reads them."""
    from datetime import UTC, datetime

    from django.test import override_settings

    author = User.objects.create_user("writer")
    row = tool("direct", input_schema={"type": "object", "properties": {"who": {"type": "string"}}})
    row.description = "second"
    row._history_date = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)  # type: ignore[attr-defined]
    row._change_reason = "typo"  # type: ignore[attr-defined]
    row._history_user = author  # type: ignore[attr-defined]
    row.save()
    latest = row.history.order_by("-history_id").first()  # type: ignore[attr-defined]
    assert (latest.history_type, latest.description, latest.version) == ("~", "second", row.version)
    assert latest.input_schema == row.input_schema and latest.kind == "template"
    assert latest.history_date == row._history_date  # type: ignore[attr-defined]
    assert (latest.history_change_reason, latest.history_user_id) == ("typo", author.pk)
    assert latest.changeset is not None and latest.changeset.kinds == ["tools"]
    del row._history_date, row._change_reason, row._history_user  # type: ignore[attr-defined]

    row.description = "third"
    row.save_without_historical_record()  # type: ignore[attr-defined]
    with override_settings(SIMPLE_HISTORY_ENABLED=False):
        row.description = "fourth"
        row.save()
    assert row.history.count() == 2  # type: ignore[attr-defined]
    pk = row.pk
    row.delete()
    gone = Tool.history.filter(id=pk).order_by("-history_id").first()  # type: ignore[attr-defined]
    assert (gone.history_type, gone.description) == ("-", "fourth")
