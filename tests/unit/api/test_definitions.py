"""CRUD of the four definitions through ``/api/v1/`` with DRF's test client: the same validation
as the admin (field errors in DRF's shape), nested prompt arguments and messages written in one
request, and writes published on the bus like admin edits (once, after commit)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.conf import settings
from django.test import override_settings
from rest_framework.test import APIClient

from mcp_django.conf import mcp_settings
from mcp_protocol.bus.base import CHANGES
from registry.models import Prompt, PromptArgument, Resource, ResourceTemplate, Tool

from .conftest import TEMPLATE_TOOL

pytestmark = pytest.mark.django_db

PROMPT: dict[str, Any] = {
    "name": "review",
    "title": "Review code",
    "arguments": [{"name": "code", "required": True}, {"name": "language", "completion_values": ["py"]}],
    "messages": [
        {"role": "user", "content": {"type": "text", "text": "Review this {{ language }}: {{ code }}"}},
        {"role": "assistant", "content": {"type": "text", "text": "Reading it."}},
    ],
}
RESOURCE: dict[str, Any] = {"uri": "file:///notes.txt", "name": "notes", "kind": "text", "text": "hi",
                            "mime_type": "text/plain"}
TEMPLATE: dict[str, Any] = {"uri_template": "file:///logs/{day}", "name": "logs", "kind": "text",
                            "text_template": "log of {{ day }}", "completions": {"day": ["mon", "tue"]}}
ENDPOINTS = {
    "tools": (Tool, TEMPLATE_TOOL, {"description": "changed"}),
    "resources": (Resource, RESOURCE, {"text": "changed"}),
    "resource-templates": (ResourceTemplate, TEMPLATE, {"text_template": "day {{ day }}"}),
    "prompts": (Prompt, PROMPT, {"description": "changed"}),
}


@pytest.mark.parametrize("endpoint", sorted(ENDPOINTS))
def test_create_read_update_delete_of_every_definition(api: APIClient, endpoint: str) -> None:
    model, body, change = ENDPOINTS[endpoint]
    created = api.post(f"/api/v1/{endpoint}/", body, format="json")
    assert created.status_code == 201, created.json()
    assert created["ETag"] == '"1"'
    url = f"/api/v1/{endpoint}/{created.json()['id']}/"
    got = api.get(url)
    assert got.status_code == 200 and got["ETag"] == '"1"'
    assert {k: got.json()[k] for k in body if k != "arguments"} == {k: v for k, v in body.items()
                                                                    if k != "arguments"}
    patched = api.patch(url, change, format="json")
    assert patched.status_code == 200 and patched.json()["version"] == 2 and patched["ETag"] == '"2"'
    replaced = api.put(url, {**body, **change, "title": "whole"}, format="json")
    assert replaced.status_code == 200 and replaced.json()["title"] == "whole"
    assert api.get(f"/api/v1/{endpoint}/").json()["results"][0]["version"] == 3
    assert api.delete(url).status_code == 204
    assert api.get(url).status_code == 404
    assert not model.objects.exists()


def test_a_prompt_is_written_with_its_arguments_and_messages_in_order(api: APIClient) -> None:
    prompt = api.post("/api/v1/prompts/", PROMPT, format="json").json()
    assert [a["name"] for a in prompt["arguments"]] == ["code", "language"]
    assert [m["role"] for m in prompt["messages"]] == ["user", "assistant"]
    url = f"/api/v1/prompts/{prompt['id']}/"
    # PATCH without "messages" keeps them; a list that is sent replaces the stored one.
    after = api.patch(url, {"arguments": [{"name": "code", "required": True}]}, format="json").json()
    assert [a["name"] for a in after["arguments"]] == ["code"]
    assert len(after["messages"]) == 2
    stored = list(PromptArgument.objects.filter(prompt_id=prompt["id"]).values_list("name", "position"))
    assert stored == [("code", 0)]


def test_a_definition_the_admin_refuses_is_refused_with_field_errors(api: APIClient) -> None:
    schema = {"type": "object", "properties": {"a": {"type": "strin"}}}
    bad_schema = {**TEMPLATE_TOOL, "input_schema": schema}
    answer = api.post("/api/v1/tools/", bad_schema, format="json")
    assert answer.status_code == 400
    pointer = "Not a valid JSON Schema 2020-12 at /properties/a/type"
    assert answer.json()["input_schema"][0].startswith(pointer)
    # A rule across fields (the model's clean()), reported on its field.
    answer = api.post("/api/v1/tools/", {**TEMPLATE_TOOL, "kind": "handler"}, format="json")
    assert answer.status_code == 400 and "Choose a registered tool handler" in answer.json()["handler"][0]
    # Several bad fields: one entry each.
    answer = api.post("/api/v1/tools/", {**TEMPLATE_TOOL, "name": "bad name!", "icons": "x"}, format="json")
    assert set(answer.json()) == {"name", "icons"}
    assert api.post("/api/v1/tools/", TEMPLATE_TOOL, format="json").status_code == 201
    duplicate = api.post("/api/v1/tools/", TEMPLATE_TOOL, format="json")
    assert duplicate.status_code == 400 and "already exists" in duplicate.json()["name"][0]
    answer = api.post("/api/v1/resources/", {**RESOURCE, "uri": "no scheme"}, format="json")
    assert answer.status_code == 400 and "absolute URI" in answer.json()["uri"][0]
    answer = api.post("/api/v1/resource-templates/", {**TEMPLATE, "completions": {"nope": []}}, format="json")
    assert answer.status_code == 400 and "Not variables of the template" in answer.json()["completions"][0]
    assert Tool.objects.count() == 1
    assert not Resource.objects.exists() and not ResourceTemplate.objects.exists()


def test_bad_prompt_children_are_reported_by_index_and_nothing_is_stored(api: APIClient) -> None:
    body = {
        **PROMPT,
        "arguments": [{"name": "code"}, {"name": "code"}, {"name": "has space"}],
        "messages": [
            {"role": "user", "content": {"type": "text"}},
            {"role": "system", "content": {"type": "text", "text": "x"}},
        ],
    }
    answer = api.post("/api/v1/prompts/", body, format="json")
    assert answer.status_code == 400
    errors = answer.json()
    assert set(errors["arguments"]) == {"2"}  # field validation first: the bad name
    assert set(errors["messages"]) == {"0", "1"}  # no text; "system" is no MCP role
    # Each field valid, the whole not: two arguments with one name.
    body["arguments"], body["messages"] = [{"name": "code"}, {"name": "code"}], PROMPT["messages"]
    errors = api.post("/api/v1/prompts/", body, format="json").json()
    duplicate = "Another argument of this prompt is already named 'code'."
    assert errors == {"arguments": {"1": {"name": [duplicate]}}}
    assert not Prompt.objects.exists()


@pytest.mark.django_db(transaction=True)
async def test_an_api_write_is_published_once_after_commit_like_an_admin_edit(
        superuser: Any) -> None:
    with override_settings(MCP={**settings.MCP, "BUS": {"BACKEND": "mcp_protocol.bus.memory.MemoryBus",
                                                        "OPTIONS": {}}}):
        subscription = await mcp_settings.backend("BUS").subscribe(CHANGES)
        messages = subscription.__aiter__()
        client = APIClient()
        await sync_to_async(client.force_login)(superuser)
        created = await sync_to_async(client.post)("/api/v1/prompts/", PROMPT, format="json")
        assert created.status_code == 201
        # One message for the prompt and its four children: one transaction, one fan-out.
        assert (await asyncio.wait_for(anext(messages), 5))["kind"] == "prompts"
        answer = await sync_to_async(client.post)("/api/v1/resources/", RESOURCE, format="json")
        assert answer.status_code == 201
        message = await asyncio.wait_for(anext(messages), 5)
        assert message["kind"] == "resources" and message["uris"] == ["file:///notes.txt"]
        # A refused write publishes nothing: the next message is the next good write's.
        assert (await sync_to_async(client.post)("/api/v1/tools/", {"name": "x y"}, format="json")
                ).status_code == 400
        assert (await sync_to_async(client.post)("/api/v1/tools/", TEMPLATE_TOOL, format="json")
                ).status_code == 201
        assert (await asyncio.wait_for(anext(messages), 5))["kind"] == "tools"
        await subscription.close()


def test_null_for_a_column_that_cannot_hold_it_is_a_field_error_not_a_500(api: APIClient) -> None:
    # As a multipart form: DRF parses the JSON value after its null check (schemathesis found it).
    answer = api.post("/api/v1/prompts/", {"name": "p", "icons": "null", "meta": "null"}, format="multipart")
    assert answer.status_code == 400
    null = ["This field may not be null."]
    assert answer.json() == {"icons": null, "meta": null}
    answer = api.post("/api/v1/tools/", {**TEMPLATE_TOOL, "input_schema": None}, format="json")
    assert answer.status_code == 400 and "input_schema" in answer.json()
    assert not Prompt.objects.exists() and not Tool.objects.exists()


@override_settings(REGISTRY_HTTP_ALLOWED_HOSTS=["api.example.com"])  # an enabled tool's host (issue 31)
def test_an_http_tool_with_its_request_fields_round_trips_and_a_bad_template_is_a_field_error(
    api: APIClient,
) -> None:
    body = {"name": "get_pet", "kind": "http", "http_method": "GET",
            "http_url": "https://api.example.com/pets/{id}{?fields*}",
            "http_headers": {"Accept-Language": "en"},
            "http_result_pointer": "/data", "input_schema": {"type": "object", "properties": {
                "id": {"type": "string"}, "fields": {"type": "array"}}}}
    created = api.post("/api/v1/tools/", body, format="json")
    assert created.status_code == 201, created.json()
    assert {k: created.json()[k] for k in body} == body
    bad = api.post("/api/v1/tools/", {**body, "name": "bad", "http_url": "https://api.example.com{+x}"},
                   format="json")
    assert bad.status_code == 400 and "http_url" in bad.json()
