"""The admin with Django's test client: add/change pages of every model, field errors, the MCP JSON
preview and the try-it page."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from registry.models import Prompt, Resource, ResourceTemplate, Tool

from .conftest import tool_form

pytestmark = pytest.mark.django_db

MODELS = {"tool": Tool, "resource": Resource, "resourcetemplate": ResourceTemplate, "prompt": Prompt}


def inline_management(prefix: str, total: int) -> dict[str, str]:
    return {
        f"{prefix}-TOTAL_FORMS": str(total),
        f"{prefix}-INITIAL_FORMS": "0",
        f"{prefix}-MIN_NUM_FORMS": "0",
        f"{prefix}-MAX_NUM_FORMS": "1000",
    }


@pytest.mark.parametrize("model", sorted(MODELS))
def test_add_and_change_pages_render_with_preview_and_try_it_link(
    admin_client: Client, demo: None, model: str
) -> None:
    assert admin_client.get(reverse(f"admin:registry_{model}_add")).status_code == 200
    obj = MODELS[model].objects.order_by("pk").first()
    page = admin_client.get(reverse(f"admin:registry_{model}_change", args=[obj.pk]))
    assert page.status_code == 200
    html = page.content.decode()
    assert reverse(f"admin:registry_{model}_try", args=[obj.pk]) in html
    assert "MCP JSON preview" in html and "2026-07-28" in html
    assert "mcp_django/json-editor.js" in html
    assert admin_client.get(reverse(f"admin:registry_{model}_changelist")).status_code == 200


def test_tool_preview_is_the_wire_json_a_client_receives(admin_client: Client, demo: None) -> None:
    echo = Tool.objects.get(name="echo")
    html = admin_client.get(reverse("admin:registry_tool_change", args=[echo.pk])).content.decode()
    assert "&quot;inputSchema&quot;" in html and "&quot;readOnlyHint&quot;: true" in html


def test_adding_a_tool_shows_field_errors_then_saves(admin_client: Client) -> None:
    url = reverse("admin:registry_tool_add")
    bad = admin_client.post(
        url, tool_form(name="bad name", input_schema='{"type": "array"}', icons="{not json")
    )
    assert bad.status_code == 200
    html = bad.content.decode()
    assert "Name must be 1-128 characters" in html
    assert "The schema must have &quot;type&quot;: &quot;object&quot;." in html
    assert "Enter a valid JSON." in html
    assert not Tool.objects.exists()
    unregistered = admin_client.post(url, tool_form(kind="handler", handler="no.such"))
    assert "Select a valid choice" in unregistered.content.decode()
    good = admin_client.post(url, tool_form())
    assert good.status_code == 302, good.content.decode()[:2000]
    assert Tool.objects.get(name="admin_tool").input_schema["required"] == ["who"]


def test_changing_a_tool_keeps_validation(admin_client: Client, demo: None) -> None:
    echo = Tool.objects.get(name="echo")
    url = reverse("admin:registry_tool_change", args=[echo.pk])
    data = tool_form(
        name="echo",
        kind="handler",
        handler="demo.echo",
        template_text="",
        input_schema=json.dumps(
            {"type": "object", "properties": {"p": {"type": "number", "x-mcp-header": "P"}}}
        ),
    )
    assert "only allowed on integer, string or boolean" in admin_client.post(url, data).content.decode()
    data["input_schema"] = json.dumps(echo.input_schema)
    data["description"] = "Edited"
    assert admin_client.post(url, data).status_code == 302
    assert Tool.objects.get(name="echo").description == "Edited"


def test_adding_resources_and_templates(admin_client: Client) -> None:
    base = {
        "name": "r",
        "title": "",
        "description": "",
        "enabled": "on",
        "mime_type": "text/plain",
        "size": "",
        "annotations": "",
        "kind": "text",
        "text": "hello",
        "blob": "",
        "handler": "",
        "icons": "[]",
        "meta": "{}",
    }
    bad = admin_client.post(reverse("admin:registry_resource_add"), {**base, "uri": "not a uri"})
    assert bad.status_code == 200 and "is not an absolute URI" in bad.content.decode()
    assert not Resource.objects.exists()
    assert (
        admin_client.post(reverse("admin:registry_resource_add"), {**base, "uri": "x:hello"}).status_code
        == 302
    )
    template = {
        "name": "t",
        "title": "",
        "description": "",
        "enabled": "on",
        "mime_type": "",
        "annotations": "",
        "kind": "text",
        "text_template": "id={{ id }}",
        "handler": "",
        "completions": '{"id": ["1"]}',
        "completion_handler": "",
        "icons": "[]",
        "meta": "{}",
    }
    bad = admin_client.post(
        reverse("admin:registry_resourcetemplate_add"), {**template, "uri_template": "x://{id"}
    )
    assert bad.status_code == 200
    assert "Not a valid RFC 6570 URI template: unclosed" in bad.content.decode()
    assert not ResourceTemplate.objects.exists()
    ok = admin_client.post(
        reverse("admin:registry_resourcetemplate_add"), {**template, "uri_template": "x://{id}"}
    )
    assert ok.status_code == 302
    assert ResourceTemplate.objects.get(name="t").completions == {"id": ["1"]}


def test_adding_a_prompt_with_inline_arguments_and_messages(admin_client: Client) -> None:
    data = {
        "name": "p",
        "title": "",
        "description": "A prompt",
        "enabled": "on",
        "handler": "",
        "completion_handler": "",
        "icons": "[]",
        "meta": "{}",
        **inline_management("arguments", 1),
        **inline_management("messages", 2),
        "arguments-0-position": "0",
        "arguments-0-name": "topic",
        "arguments-0-title": "",
        "arguments-0-description": "",
        "arguments-0-required": "on",
        "arguments-0-completion_values": '["a", "b"]',
        "messages-0-position": "0",
        "messages-0-role": "user",
        "messages-0-content": json.dumps({"type": "text", "text": "About {{ topic }}"}),
        "messages-1-position": "1",
        "messages-1-role": "assistant",
        "messages-1-content": json.dumps({"type": "image", "mimeType": "image/png"}),
    }
    bad = admin_client.post(reverse("admin:registry_prompt_add"), data)
    assert bad.status_code == 200 and "An image content block needs data." in bad.content.decode()
    assert not Prompt.objects.exists()
    data["messages-1-content"] = json.dumps({"type": "text", "text": "OK"})
    assert admin_client.post(reverse("admin:registry_prompt_add"), data).status_code == 302
    prompt = Prompt.objects.get(name="p")
    assert [a.name for a in prompt.arguments.all()] == ["topic"]
    assert [m.role for m in prompt.messages.all()] == ["user", "assistant"]


def resource_form(resource: Resource, **overrides: str) -> dict[str, str]:
    data = {
        "uri": resource.uri,
        "name": resource.name,
        "title": resource.title,
        "description": resource.description,
        "enabled": "on",
        "mime_type": resource.mime_type,
        "size": "",
        "annotations": "",
        "kind": resource.kind,
        "text": resource.text,
        "blob": resource.blob,
        "handler": resource.handler,
        "icons": "[]",
        "meta": "{}",
    }
    return {**data, **overrides}


def test_changing_a_resource_saves_and_an_invalid_change_saves_nothing(admin_client: Client) -> None:
    resource = Resource.objects.create(
        uri="x:doc", name="doc", kind="text", text="v1", mime_type="text/plain"
    )
    url = reverse("admin:registry_resource_change", args=[resource.pk])
    bad = admin_client.post(url, resource_form(resource, text="v2", mime_type="markdown"))
    assert bad.status_code == 200
    assert "&#x27;markdown&#x27; is not a media type" in bad.content.decode()
    resource.refresh_from_db()
    assert (resource.text, resource.mime_type) == ("v1", "text/plain")
    good = admin_client.post(url, resource_form(resource, text="v2", mime_type="text/markdown"))
    assert good.status_code == 302, good.content.decode()[:2000]
    resource.refresh_from_db()
    assert (resource.text, resource.mime_type) == ("v2", "text/markdown")


def template_form(template: ResourceTemplate, **overrides: str) -> dict[str, str]:
    data = {
        "uri_template": template.uri_template,
        "name": template.name,
        "title": "",
        "description": "",
        "enabled": "on",
        "mime_type": template.mime_type,
        "annotations": "",
        "kind": template.kind,
        "text_template": template.text_template,
        "handler": template.handler,
        "completions": json.dumps(template.completions),
        "completion_handler": "",
        "icons": "[]",
        "meta": "{}",
    }
    return {**data, **overrides}


def test_changing_a_resource_template_saves_and_an_invalid_change_saves_nothing(admin_client: Client) -> None:
    template = ResourceTemplate.objects.create(
        uri_template="x://doc/{id}", name="doc", kind="text", text_template="doc {{ id }}"
    )
    url = reverse("admin:registry_resourcetemplate_change", args=[template.pk])
    bad = admin_client.post(url, template_form(template, text_template="", uri_template="x://d/{id}"))
    assert bad.status_code == 200
    assert "A text template resource needs a text template." in bad.content.decode()
    template.refresh_from_db()
    assert (template.uri_template, template.text_template) == ("x://doc/{id}", "doc {{ id }}")
    good = admin_client.post(
        url, template_form(template, text_template="d={{ id }}", uri_template="x://d/{id}")
    )
    assert good.status_code == 302, good.content.decode()[:2000]
    template.refresh_from_db()
    assert (template.uri_template, template.text_template) == ("x://d/{id}", "d={{ id }}")


def prompt_change_form(prompt: Prompt, message_content: dict[str, Any]) -> dict[str, str]:
    argument, message = prompt.arguments.get(), prompt.messages.get()
    return {
        "name": prompt.name,
        "title": "",
        "description": "Edited",
        "enabled": "on",
        "handler": "",
        "completion_handler": "",
        "icons": "[]",
        "meta": "{}",
        **inline_management("arguments", 2),
        "arguments-INITIAL_FORMS": "1",
        **inline_management("messages", 1),
        "messages-INITIAL_FORMS": "1",
        "arguments-0-id": str(argument.pk),
        "arguments-0-prompt": str(prompt.pk),
        "arguments-0-position": "0",
        "arguments-0-name": "subject",
        "arguments-0-title": "",
        "arguments-0-description": "",
        "arguments-0-required": "on",
        "arguments-0-completion_values": "[]",
        "arguments-1-prompt": str(prompt.pk),
        "arguments-1-position": "1",
        "arguments-1-name": "tone",
        "arguments-1-title": "",
        "arguments-1-description": "",
        "arguments-1-completion_values": '["dry"]',
        "messages-0-id": str(message.pk),
        "messages-0-prompt": str(prompt.pk),
        "messages-0-position": "0",
        "messages-0-role": "user",
        "messages-0-content": json.dumps(message_content),
    }


def test_changing_a_prompt_with_its_inlines_saves_and_an_invalid_change_saves_nothing(
    admin_client: Client,
) -> None:
    prompt = Prompt.objects.create(name="p", description="Original")
    prompt.arguments.create(name="topic", required=True)
    prompt.messages.create(role="user", content={"type": "text", "text": "About {{ topic }}"})
    url = reverse("admin:registry_prompt_change", args=[prompt.pk])
    # A non-string image payload used to be a TypeError (a 500); it is a field error.
    bad = admin_client.post(
        url, prompt_change_form(prompt, {"type": "image", "data": 5, "mimeType": "image/png"})
    )
    assert bad.status_code == 200
    assert "An image content block: &#x27;data&#x27; must be a string, not a number." in bad.content.decode()
    prompt.refresh_from_db()
    assert prompt.description == "Original"
    assert [a.name for a in prompt.arguments.all()] == ["topic"]
    assert prompt.messages.get().content == {"type": "text", "text": "About {{ topic }}"}
    good = admin_client.post(url, prompt_change_form(prompt, {"type": "text", "text": "On {{ subject }}"}))
    assert good.status_code == 302, good.content.decode()[:3000]
    prompt.refresh_from_db()
    assert prompt.description == "Edited"
    assert [(a.name, a.completion_values) for a in prompt.arguments.all()] == [
        ("subject", []),
        ("tone", ["dry"]),
    ]
    assert prompt.messages.get().content == {"type": "text", "text": "On {{ subject }}"}


def try_url(model: str, obj: Any) -> str:
    return reverse(f"admin:registry_{model}_try", args=[obj.pk])


def test_try_it_calls_a_tool_and_shows_result_and_notifications(admin_client: Client, demo: None) -> None:
    echo = Tool.objects.get(name="echo")
    page = admin_client.get(try_url("tool", echo))
    # The arguments form is generated from the input schema (tool-form.js), not prefilled with "".
    html = page.content.decode()
    assert page.status_code == 200 and '<script id="try-schema"' in html and '"message"' in html
    assert "&quot;message&quot;: &quot;&quot;" not in html
    result = admin_client.post(try_url("tool", echo), {"arguments": '{"message": "tried"}'})
    assert result.context["outcome"].result == {"content": [{"type": "text", "text": "tried"}]}
    assert "tried" in result.content.decode()

    count = Tool.objects.get(name="count_down")
    result = admin_client.post(try_url("tool", count), {"arguments": '{"steps": 2, "delay": 0}'})
    notes = result.context["outcome"].notifications
    assert [n["params"]["progress"] for n in notes] == [1, 2]
    assert "notifications/progress" in result.content.decode()


def test_try_it_reports_bad_arguments_tool_errors_and_missing_client_features(
    admin_client: Client, demo: None
) -> None:
    echo = Tool.objects.get(name="echo")
    result = admin_client.post(try_url("tool", echo), {"arguments": '{"message": 5}'})
    assert "do not match inputSchema" in result.context["outcome"].error
    result = admin_client.post(try_url("tool", echo), {"arguments": "[1]"})
    assert "must be a JSON object" in result.content.decode()
    result = admin_client.post(
        try_url("tool", Tool.objects.get(name="fail")), {"arguments": '{"reason": "test"}'}
    )
    assert result.context["outcome"].result["isError"] is True
    result = admin_client.post(
        try_url("tool", Tool.objects.get(name="ask_llm")), {"arguments": '{"question": "q"}'}
    )
    assert "sampling" in result.context["outcome"].result["content"][0]["text"]


def test_try_it_checks_structured_content_against_the_output_schema(admin_client: Client, demo: None) -> None:
    stats = Tool.objects.get(name="text_stats")
    result = admin_client.post(try_url("tool", stats), {"arguments": '{"text": "a b\\nc"}'})
    assert result.context["outcome"].error is None
    assert result.context["outcome"].result["structuredContent"] == {"characters": 5, "words": 3, "lines": 2}


def test_try_it_renders_prompts_and_reads_resources_and_templates(admin_client: Client, demo: None) -> None:
    review = Prompt.objects.get(name="code_review")
    result = admin_client.post(
        try_url("prompt", review), {"arguments": '{"language": "go", "code": "x := 1"}'}
    )
    assert result.context["outcome"].result["messages"][1]["content"]["text"].endswith("x := 1")
    result = admin_client.post(try_url("prompt", review), {"arguments": "{}"})
    assert "Missing required arguments: language, code" in result.content.decode()

    readme = Resource.objects.get(uri="demo://readme")
    result = admin_client.post(try_url("resource", readme), {})
    assert result.context["outcome"].result["contents"][0]["mimeType"] == "text/markdown"

    greeting = ResourceTemplate.objects.get(name="greeting")
    page = admin_client.get(try_url("resourcetemplate", greeting))
    assert "demo://greeting/1" in page.content.decode()
    result = admin_client.post(try_url("resourcetemplate", greeting), {"uri": "demo://greeting/Zed"})
    assert result.context["outcome"].result["contents"][0]["text"].startswith("Hello, Zed!")
    result = admin_client.post(try_url("resourcetemplate", greeting), {"uri": "demo://elsewhere"})
    assert result.context["outcome"] is None  # not this template's: not read (issue 24 item 6)
    assert "does not match the template" in result.content.decode()


def test_try_it_runs_a_disabled_tool_and_says_clients_cannot_see_it(admin_client: Client, demo: None) -> None:
    Tool.objects.filter(name="echo").update(enabled=False)
    result = admin_client.post(
        try_url("tool", Tool.objects.get(name="echo")), {"arguments": '{"message": "x"}'}
    )
    assert "disabled" in result.context["outcome"].note
    assert result.context["outcome"].result == {"content": [{"type": "text", "text": "x"}]}


def test_try_it_needs_a_staff_login(client: Client, demo: None) -> None:
    response = client.get(try_url("tool", Tool.objects.get(name="echo")))
    assert response.status_code == 302 and "/login/" in response["Location"]


def test_try_it_needs_change_permission_not_just_view(client: Client, demo: None) -> None:
    from django.contrib.auth.models import Permission, User

    viewer = User.objects.create_user("viewer", password="pw", is_staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_tool"))
    client.force_login(viewer)
    echo = Tool.objects.get(name="echo")
    assert client.get(reverse("admin:registry_tool_change", args=[echo.pk])).status_code == 200
    assert client.post(try_url("tool", echo), {"arguments": '{"message": "x"}'}).status_code == 403
