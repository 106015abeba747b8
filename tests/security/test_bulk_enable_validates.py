"""The admin's bulk "Enable" validates each row as a form save does (issue 37 item 7): a tool kept
disabled because it may not be served (the demo's http tool, whose host is not allowed) stays
disabled and is named with the reason; the other selected rows are enabled. Enabling it with the
list's own checkbox shows the row's error (it was a 500)."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from registry.models import Tool
from registry.transfer.fixtures import load_document, read_fixture

pytestmark = pytest.mark.django_db


def test_bulk_enable_refuses_a_row_that_does_not_validate_and_enables_the_rest(admin_client: Client) -> None:
    load_document(read_fixture("demo"))
    blocked = Tool.objects.get(name="http_post_example")
    assert not blocked.enabled  # shipped disabled: no host is allowed out of the box
    fine = Tool.objects.get(name="echo")
    Tool.objects.filter(pk=fine.pk).update(enabled=False)
    answer = admin_client.post(
        reverse("admin:registry_tool_changelist"),
        {"action": "enable", "_selected_action": [blocked.pk, fine.pk]},
        follow=True,
    )
    page = answer.content.decode()
    assert answer.status_code == 200
    assert "1 tools enabled." in page
    assert "Not enabled: http_post_example" in page and "REGISTRY_HTTP_ALLOWED_HOSTS" in page
    assert not Tool.objects.get(pk=blocked.pk).enabled
    assert Tool.objects.get(pk=fine.pk).enabled


def test_enabling_in_the_list_shows_the_rows_error_instead_of_a_500(admin_client: Client) -> None:
    load_document(read_fixture("demo"))
    page = admin_client.get(reverse("admin:registry_tool_changelist"))
    forms = page.context["cl"].formset.forms
    data = {"form-TOTAL_FORMS": str(len(forms)), "form-INITIAL_FORMS": str(len(forms)), "_save": "Save"}
    for index, form in enumerate(forms):
        data[f"form-{index}-id"] = str(form.instance.pk)
        if form.instance.enabled or form.instance.name == "http_post_example":
            data[f"form-{index}-enabled"] = "on"
    answer = admin_client.post(reverse("admin:registry_tool_changelist"), data)
    assert answer.status_code == 200  # the list again, with the row's error
    page = answer.content.decode()
    assert "http_url: &#x27;httpbin.org&#x27; is not in REGISTRY_HTTP_ALLOWED_HOSTS" in page
    assert not Tool.objects.get(name="http_post_example").enabled
