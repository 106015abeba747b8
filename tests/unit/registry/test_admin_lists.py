"""The registry's admin lists and prompt inlines (issue 31 items 3 and 5): enable/disable as bulk
actions and ``enabled`` editable in each list, a prompt's new argument or message going after the
others, and the site's header and favicon."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from registry.models import ChangeSet, Prompt, Resource, Tool
from registry.transfer.fixtures import load_document, read_fixture

pytestmark = pytest.mark.django_db


def test_the_admin_says_mcpsite_administration_and_has_a_favicon(admin_client: Client) -> None:
    html = admin_client.get(reverse("admin:index")).content.decode()
    assert '<a href="/admin/">mcpsite administration</a>' in html
    assert 'rel="icon" href="/static/mcpsite/favicon.svg"' in html
    assert admin_client.get("/static/mcpsite/favicon.svg").status_code == 200


def test_the_home_page_follows_the_system_dark_mode_and_has_the_favicon(client: Client) -> None:
    html = client.get("/").content.decode()
    assert '<meta name="color-scheme" content="light dark">' in html
    assert "admin/css/dark_mode.css" in html and "mcpsite/favicon.svg" in html


@pytest.mark.parametrize("action, enabled", [("disable", False), ("enable", True)])
def test_enable_and_disable_are_bulk_actions_in_one_change_set(
    transactional_db: None, admin_client: Client, action: str, enabled: bool
) -> None:
    load_document(read_fixture("demo"))  # committed: each transaction below opens its change set
    Tool.objects.update(enabled=not enabled)
    chosen = list(Tool.objects.order_by("name").values_list("pk", flat=True)[:3])
    versions = dict(Tool.objects.values_list("pk", "version"))
    changesets = ChangeSet.objects.count()
    answer = admin_client.post(
        reverse("admin:registry_tool_changelist"),
        {"action": action, "_selected_action": chosen},
        follow=True,
    )
    assert f"3 tools {action}d." in answer.content.decode()
    assert set(Tool.objects.filter(enabled=enabled).values_list("pk", flat=True)) == set(chosen)
    assert all(Tool.objects.get(pk=pk).version == versions[pk] + 1 for pk in chosen)
    assert ChangeSet.objects.count() == changesets + 1
    assert ChangeSet.objects.latest("id").source == "admin"


def test_enabled_is_editable_in_the_list(admin_client: Client, demo: None) -> None:
    rows = list(Resource.objects.order_by("-updated_at", "uri")[:2])  # the list's first page
    page = admin_client.get(reverse("admin:registry_resource_changelist"))
    assert 'name="form-0-enabled"' in page.content.decode()
    formset = page.context["cl"].formset
    data: dict[str, Any] = {
        "form-TOTAL_FORMS": str(len(formset.forms)),
        "form-INITIAL_FORMS": str(len(formset.forms)),
        "_save": "Save",
    }
    for index, form in enumerate(formset.forms):
        data[f"form-{index}-id"] = str(form.instance.pk)
        if form.instance.pk != formset.forms[0].instance.pk and form.instance.enabled:
            data[f"form-{index}-enabled"] = "on"
    first = formset.forms[0].instance
    assert first.enabled and rows
    answer = admin_client.post(reverse("admin:registry_resource_changelist"), data)
    assert answer.status_code == 302, answer.content.decode()[:2000]
    first.refresh_from_db()
    assert not first.enabled


def prompt_form(**extra: str) -> dict[str, str]:
    form = {
        "name": "review",
        "description": "",
        "enabled": "on",
        "arguments-TOTAL_FORMS": "0",
        "arguments-INITIAL_FORMS": "0",
        "messages-TOTAL_FORMS": "0",
        "messages-INITIAL_FORMS": "0",
    }
    form.update(extra)
    return form


def test_a_new_argument_left_without_a_position_goes_after_the_others(admin_client: Client) -> None:
    url = reverse("admin:registry_prompt_add")
    answer = admin_client.post(
        url,
        prompt_form(
            **{
                "arguments-TOTAL_FORMS": "3",
                "arguments-0-position": "",
                "arguments-0-name": "later",
                "arguments-0-completion_values": "[]",
                "arguments-1-position": "4",
                "arguments-1-name": "first",
                "arguments-1-completion_values": "[]",
                "arguments-2-position": "",
                "arguments-2-name": "last",
                "arguments-2-completion_values": "[]",
            }
        ),
    )
    assert answer.status_code == 302, answer.content.decode()[:3000]
    prompt = Prompt.objects.get(name="review")
    assert list(prompt.arguments.values_list("name", "position")) == [("first", 4), ("later", 5), ("last", 6)]


def test_the_prompt_inlines_are_stacked_with_a_position_to_drag(admin_client: Client, demo: None) -> None:
    prompt = Prompt.objects.get(name="code_review")
    html = admin_client.get(reverse("admin:registry_prompt_change", args=[prompt.pk])).content.decode()
    assert "registry/inline-order.js" in html and 'class="mcp-position"' in html
    assert "inline-related tabular" not in html  # no wide table of arguments


def test_audit_rows_link_the_key_and_the_tool_and_show_seconds(admin_client: Client) -> None:
    from datetime import UTC, datetime

    from access.models import ApiKey, AuditRecord

    key = ApiKey.objects.create(name="ci", prefix="abcd1234", digest="0" * 64)
    AuditRecord.objects.create(
        time=datetime(2026, 11, 26, 12, 34, 56, tzinfo=UTC),
        principal="key abcd1234",
        principal_id=f"key:{key.pk}",
        revision="2025-11-25",
        method="tools/call",
        name="echo",
        outcome="ok",
        duration_ms=1.5,
    )
    html = admin_client.get(reverse("admin:access_auditrecord_changelist")).content.decode()
    assert f'<a href="{reverse("admin:access_apikey_change", args=[key.pk])}">key abcd1234</a>' in html
    assert f'<a href="{reverse("admin:registry_tool_changelist")}?name=echo">echo</a>' in html
    assert "12:34:56" in html
