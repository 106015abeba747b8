"""Issue 31 items 1 and 2, below the browser: the tool follows its kind (a save clears the other
kinds' fields; a template's placeholders are checked against the input schema; an enabled http
tool's host must be allowed), the handler choice lists the project's handlers, and "try it" runs
the change form's unsaved data without saving or announcing anything."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.core.exceptions import ValidationError
from django.test import Client, override_settings
from django.urls import reverse

from registry.admin import forms as registry_forms
from registry.models import ChangeSet, Tool

from .conftest import tool_form

pytestmark = pytest.mark.django_db

SCHEMA = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}


def errors_of(row: Tool) -> dict[str, list[str]]:
    with pytest.raises(ValidationError) as caught:
        row.full_clean()
    return caught.value.message_dict


def template_tool(**fields: Any) -> Tool:
    return Tool(
        **{"name": "t", "kind": "template", "input_schema": SCHEMA, "template_text": "{{ a }}", **fields}
    )


# -- the kind's fields ------------------------------------------------------------------------------
@override_settings(REGISTRY_HTTP_ALLOWED_HOSTS=["api.example.com"])
def test_switching_a_tool_to_another_kind_clears_the_fields_of_the_others() -> None:
    row = Tool(
        name="switched",
        kind="http",
        input_schema=SCHEMA,
        http_url="https://api.example.com/x",
        http_method="GET",
        http_headers={"X-A": "1"},
        http_forward_trace=True,
    )
    row.full_clean()
    row.save()
    row.kind, row.template_text = "template", "Now {{ a }}"
    row.full_clean()
    row.save()
    row.refresh_from_db()
    assert (row.http_url, row.http_method, row.http_headers, row.http_forward_trace) == (
        "",
        "POST",
        {},
        False,
    )
    assert row.template_text == "Now {{ a }}"
    row.kind, row.handler = "handler", "demo.echo"
    row.full_clean()
    assert (row.template_text, row.template_structured) == ("", None)


def test_the_kind_fields_cover_every_kind_and_no_field_twice() -> None:
    assert set(Tool.KIND_FIELDS) == set(Tool.Kind.values)
    every = [name for names in Tool.KIND_FIELDS.values() for name in names]
    assert len(every) == len(set(every))
    assert {f.name for f in Tool._meta.concrete_fields if f.name.startswith("http_")} == set(
        Tool.KIND_FIELDS["http"]
    )


# -- template placeholders ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("fields", "field", "words"),
    [
        ({"template_text": "Hi {{ b }}"}, "template_text", "does not define 'b'"),
        ({"template_text": "Hi {{ a.upper }}"}, "template_text", "no attribute access"),
        ({"template_text": "{% if a %}yes{% endif %}"}, "template_text", "{% if a %} is not supported"),
        ({"template_text": "Hi {{ a|upper }}"}, "template_text", "{{ a|upper }} is not supported"),
        ({"template_text": "{# note #}{{ a }}"}, "template_text", "is not supported"),
        (
            {"template_text": "", "template_structured": {"x": ["{{ c }}"]}},
            "template_structured",
            "does not define 'c'",
        ),
    ],
)
def test_a_template_placeholder_the_schema_cannot_fill_is_a_field_error(
    fields: dict[str, Any], field: str, words: str
) -> None:
    messages = errors_of(template_tool(**fields))
    assert words in " ".join(messages[field]), messages


def test_placeholders_of_defined_properties_and_their_filters_are_accepted() -> None:
    template_tool(
        template_text="{{ a }} {{a|json}} {{ a | json_escape }}", template_structured={"a": "{{ a }}"}
    ).full_clean()


@override_settings(REGISTRY_HTTP_ALLOWED_HOSTS=["api.example.com"])
def test_an_http_body_template_is_checked_the_same_way() -> None:
    row = Tool(
        name="h",
        kind="http",
        input_schema=SCHEMA,
        http_url="https://api.example.com/x",
        http_body_template={"q": "{{ a.strip }}"},
    )
    assert "no attribute access" in " ".join(errors_of(row)["http_body_template"])


# -- the host allow-list at save ------------------------------------------------------------------------
def http_tool(**fields: Any) -> Tool:
    return Tool(
        **{
            "name": "h",
            "kind": "http",
            "input_schema": SCHEMA,
            "http_url": "https://api.example.com/items/{a}",
            **fields,
        }
    )


def test_an_enabled_http_tool_whose_host_is_not_allowed_is_refused_at_save() -> None:
    with override_settings(REGISTRY_HTTP_ALLOWED_HOSTS=["other.example.com"]):
        message = " ".join(errors_of(http_tool())["http_url"])
    assert "'api.example.com' is not in REGISTRY_HTTP_ALLOWED_HOSTS" in message
    assert "other.example.com" in message and "disabled" in message
    with override_settings(REGISTRY_HTTP_ALLOWED_HOSTS=["*.example.com"]):
        http_tool().full_clean()


def test_a_disabled_http_tool_may_keep_a_host_that_is_not_allowed() -> None:
    with override_settings(REGISTRY_HTTP_ALLOWED_HOSTS=[]):
        http_tool(enabled=False).full_clean()
        assert "http_url" in errors_of(http_tool(enabled=True))


def test_the_demo_loads_with_its_http_example_disabled_and_every_enabled_tool_valid(demo: None) -> None:
    example = Tool.objects.get(name="http_post_example")
    assert example.enabled is False and "REGISTRY_HTTP_ALLOWED_HOSTS" in example.description
    for row in Tool.objects.filter(enabled=True):
        row.full_clean()


# -- the handler choice ---------------------------------------------------------------------------------
def handler_names(**instance: Any) -> list[str]:
    form = registry_forms.ToolForm(instance=Tool(**instance))
    return [value for value, _ in form.fields["handler"].choices if value]


def test_the_handler_choice_lists_conformance_handlers_only_once_that_fixture_is_loaded(
    request: pytest.FixtureRequest,
) -> None:
    names = handler_names()
    assert "demo.echo" in names
    assert not any(name.startswith("conformance.") for name in names), names
    # A row that names one keeps it as a choice.
    assert "conformance.image" in handler_names(kind="handler", handler="conformance.image")
    request.getfixturevalue("conformance")
    assert "conformance.image" in handler_names()


# -- the admin form ---------------------------------------------------------------------------------------
def test_the_kind_select_tells_the_page_which_fields_each_kind_has(admin_client: Client) -> None:
    html = admin_client.get(reverse("admin:registry_tool_add")).content.decode()
    assert "data-kind-fields" in html and "registry/tool-form.js" in html
    assert 'id="try-it"' in html and reverse("admin:registry_tool_try_unsaved") in html


def test_the_admin_save_of_a_kind_switch_clears_the_other_kinds_fields(admin_client: Client) -> None:
    with override_settings(REGISTRY_HTTP_ALLOWED_HOSTS=["api.example.com"]):
        data = tool_form(kind="http", template_text="", http_url="https://api.example.com/{who}")
        assert admin_client.post(reverse("admin:registry_tool_add"), data).status_code == 302
    row = Tool.objects.get(name="admin_tool")
    switched = tool_form(
        kind="template",
        template_text="Hi {{ who }}",
        opened_version=str(row.version),
        http_url="https://api.example.com/{who}",
    )
    assert (
        admin_client.post(reverse("admin:registry_tool_change", args=[row.pk]), switched).status_code == 302
    )
    row.refresh_from_db()
    assert (row.kind, row.http_url, row.template_text) == ("template", "", "Hi {{ who }}")


# -- try it on unsaved data -----------------------------------------------------------------------------
def tried(client: Client, url: str, data: dict[str, Any], arguments: Any) -> Any:
    return client.post(url, {**data, "_try_arguments": json.dumps(arguments)})


def test_try_it_runs_the_forms_unsaved_data_and_saves_and_announces_nothing(
    admin_client: Client, demo: None, django_capture_on_commit_callbacks: Any
) -> None:
    greet = Tool.objects.get(name="greet")
    stored = (greet.version, greet.template_text, greet.enabled)
    changesets = ChangeSet.objects.count()
    url = reverse("admin:registry_tool_try_unsaved_change", args=[greet.pk])
    data = tool_form(
        name="greet", template_text="Howdy {{ who }}", enabled="", opened_version=str(greet.version)
    )
    with django_capture_on_commit_callbacks() as callbacks:
        answer = tried(admin_client, url, data, {"who": "Ada"})
    assert answer.status_code == 200, answer.content
    body = answer.json()
    assert body["result"]["content"] == [{"type": "text", "text": "Howdy Ada"}]
    assert "not saved" in body["note"] and "disabled" in body["note"]
    greet.refresh_from_db()
    assert (greet.version, greet.template_text, greet.enabled) == stored
    assert ChangeSet.objects.count() == changesets and callbacks == []  # no bus publish


def test_try_it_on_a_tool_not_saved_yet(admin_client: Client) -> None:
    url = reverse("admin:registry_tool_try_unsaved")
    answer = tried(admin_client, url, tool_form(template_text="Hi {{ who }}!"), {"who": "Lin"})
    assert answer.json()["result"]["content"][0]["text"] == "Hi Lin!"
    assert not Tool.objects.exists()


def test_try_it_reports_form_errors_and_bad_arguments_without_running(admin_client: Client) -> None:
    url = reverse("admin:registry_tool_try_unsaved")
    answer = tried(admin_client, url, tool_form(template_text="Hi {{ nobody }}"), {"who": "x"})
    assert answer.status_code == 400
    assert "does not define 'nobody'" in " ".join(answer.json()["field_errors"]["template_text"])
    answer = tried(admin_client, url, tool_form(), {"who": 5})
    assert "do not match inputSchema" in answer.json()["error"]
    answer = tried(admin_client, url, tool_form(), [1])
    assert answer.status_code == 400 and "JSON object" in answer.json()["error"]


def test_try_it_on_unsaved_data_needs_the_change_permission(client: Client, demo: None) -> None:
    from django.contrib.auth.models import Permission, User

    viewer = User.objects.create_user("viewer", password="pw", is_staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_tool"))
    viewer.user_permissions.add(Permission.objects.get(codename="add_tool"))
    client.force_login(viewer)
    greet = Tool.objects.get(name="greet")
    data = tool_form(name="greet")
    assert (
        tried(
            client, reverse("admin:registry_tool_try_unsaved_change", args=[greet.pk]), data, {"who": "x"}
        ).status_code
        == 403
    )
    assert tried(client, reverse("admin:registry_tool_try_unsaved"), data, {"who": "x"}).status_code == 403
    missing = reverse("admin:registry_tool_try_unsaved_change", args=[999999])
    admin = User.objects.create_superuser("root", password="pw")
    client.force_login(admin)
    assert tried(client, missing, data, {}).status_code == 404


def test_the_saved_tools_try_page_runs_a_disabled_tool_and_hides_base64(
    admin_client: Client, conformance: None
) -> None:
    image = Tool.objects.get(handler="conformance.image")
    Tool.objects.filter(pk=image.pk).update(enabled=False)
    page = admin_client.post(reverse("admin:registry_tool_try", args=[image.pk]), {"arguments": "{}"})
    outcome = page.context["outcome"]
    assert "disabled" in outcome.note and outcome.result["content"][0]["type"] == "image"
    html = page.content.decode()
    assert outcome.result["content"][0]["data"] not in html.split('id="try-outcome"')[1].split("</script>")[1]
    assert "bytes of base64, shown above" in html


# -- the preview -----------------------------------------------------------------------------------------
def test_the_preview_is_the_stored_row_one_block_when_the_revisions_agree(
    admin_client: Client, demo: None
) -> None:
    greet = Tool.objects.get(name="greet")
    url = reverse("admin:registry_tool_change", args=[greet.pk])
    html = admin_client.get(url).content.decode()
    assert html.count('class="mcp-preview"') == 1
    assert "2025-11-25 and 2026-07-28 (the same for each)" in html
    assert "Unsaved changes are not shown" not in html
    refused = admin_client.post(
        url,
        tool_form(
            name="greet",
            title="Refused title",
            template_text="{{ nobody }}",
            opened_version=str(greet.version),
        ),
    )
    html = refused.content.decode()
    assert refused.status_code == 200 and "Unsaved changes are not shown" in html
    preview = html.split('class="mcp-preview"')[1]
    assert "Refused title" not in preview.split("</pre>")[0]


def test_the_preview_shows_each_revision_when_they_differ() -> None:
    from registry.admin.base import preview_blocks

    html = preview_blocks({"2025-11-25": {"name": "a"}, "2026-07-28": {"name": "a", "x": 1}})
    assert html.count('class="mcp-preview"') == 2 and "the same for each" not in html
