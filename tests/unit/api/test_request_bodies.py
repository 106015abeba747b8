"""Issue 31 item 6: a request body holds fields, or MCP's own names of them, and nothing else.

Every writable endpoint refuses a member that is no field (400, keyed by that member, naming the
fields it takes) instead of dropping it: a tool POSTed with ``inputSchema`` used to answer 201 and
store the default, empty schema. MCP's names (``inputSchema``, ``outputSchema``, ``mimeType``,
``uriTemplate``, ``_meta``) are taken for the fields they name. JSON fields take the JSON type the
model holds (an object, or an array). DRF's test client, real database.
"""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from registry.models import Resource, ResourceTemplate, Tool

from .conftest import TEMPLATE_TOOL
from .test_definitions import PROMPT, RESOURCE, TEMPLATE
from .test_skills import SKILL

pytestmark = pytest.mark.django_db

KEY: dict[str, Any] = {"name": "ci", "tools": ["*"]}
OPENAPI: dict[str, Any] = {
    "source": "pets",
    "dry_run": True,
    "document": {"openapi": "3.0.4", "info": {"title": "t", "version": "1"}, "paths": {}},
}
# Every endpoint that reads a body, with a valid body of its own.
CREATES: dict[str, dict[str, Any]] = {
    "/api/v1/tools/": TEMPLATE_TOOL,
    "/api/v1/resources/": RESOURCE,
    "/api/v1/resource-templates/": TEMPLATE,
    "/api/v1/prompts/": PROMPT,
    "/api/v1/skills/": SKILL,
    "/api/v1/keys/": KEY,
    "/api/v1/registry/openapi": OPENAPI,
}


@pytest.mark.parametrize("url", sorted(CREATES))
def test_a_member_that_is_no_field_is_a_400_naming_it_on_every_writable_endpoint(
    api: APIClient, url: str
) -> None:
    answer = api.post(url, {**CREATES[url], "colour": "blue"}, format="json")
    assert answer.status_code == 400, answer.content
    [message] = answer.json()["colour"]
    assert message.startswith("Unknown field 'colour'.") and "The fields are: " in message


@pytest.mark.parametrize("url", [u for u in sorted(CREATES) if "registry" not in u])
def test_an_unknown_member_is_refused_on_put_and_patch_too_and_nothing_changes(
    api: APIClient, url: str
) -> None:
    created = api.post(url, CREATES[url], format="json")
    assert created.status_code == 201, created.content
    item = f"{url}{created.json()['id']}/"
    assert api.patch(item, {"nmae": "x"}, format="json").status_code == 400
    put = api.put(item, {**CREATES[url], "nmae": "x"}, format="json")
    assert put.status_code == 400 and list(put.json()) == ["nmae"]
    assert api.get(item).json().get("version", 1) == 1


def test_a_typo_is_answered_with_the_field_it_is_near(api: APIClient) -> None:
    answer = api.post("/api/v1/tools/", {**TEMPLATE_TOOL, "input_shema": {}}, format="json")
    assert answer.status_code == 400
    assert "Did you mean 'input_schema'?" in answer.json()["input_shema"][0]


@pytest.mark.parametrize(
    "nested,body",
    [
        ("arguments", {**PROMPT, "arguments": [{"name": "code", "optional": True}]}),
        ("messages", {**PROMPT, "messages": [{"role": "user", "text": "hi", "content": {}}]}),
        ("files", {**SKILL, "files": [{"path": "a.md", "text": "a", "mode": "0644"}]}),
    ],
)
def test_an_unknown_member_of_a_nested_item_is_a_400_keyed_by_its_index(
    api: APIClient, nested: str, body: dict[str, Any]
) -> None:
    url = "/api/v1/skills/" if nested == "files" else "/api/v1/prompts/"
    answer = api.post(url, body, format="json")
    assert answer.status_code == 400, answer.content
    [(index, errors)] = answer.json()[nested].items()
    [(member, [message])] = errors.items()
    assert index == "0" and message.startswith(f"Unknown field {member!r}.")


def test_read_only_fields_sent_back_are_ignored_so_get_modify_put_works(api: APIClient) -> None:
    created = api.post("/api/v1/tools/", TEMPLATE_TOOL, format="json").json()
    url = f"/api/v1/tools/{created['id']}/"
    replaced = api.put(url, {**created, "title": "round trip", "version": 99}, format="json")
    assert replaced.status_code == 200, replaced.content
    assert replaced.json()["title"] == "round trip" and replaced.json()["version"] == 2


def test_mcps_input_schema_and_output_schema_are_taken_for_their_fields(api: APIClient) -> None:
    schema = {"type": "object", "properties": {"who": {"type": "string"}}, "required": ["who"]}
    output = {"type": "object", "properties": {"greeting": {"type": "string"}}}
    wire = {
        "name": "mcp_named",
        "kind": "template",
        "template_text": "Hello {{ who }}",
        "template_structured": {"greeting": "Hello {{ who }}"},
        "inputSchema": schema,
        "outputSchema": output,
        "_meta": {"a": 1},
    }
    answer = api.post("/api/v1/tools/", wire, format="json")
    assert answer.status_code == 201, answer.content
    tool = Tool.objects.get(name="mcp_named")
    assert (tool.input_schema, tool.output_schema, tool.meta) == (schema, output, {"a": 1})
    assert answer.json()["input_schema"] == schema  # answered under the API's own names
    # The template's {{ who }} must stay an input property (checked at save since issue 31 item 1).
    narrower = {"type": "object", "properties": {"who": {"type": "string"}}}
    patched = api.patch(f"/api/v1/tools/{tool.pk}/", {"inputSchema": narrower}, format="json")
    assert patched.status_code == 200 and patched.json()["input_schema"] == narrower


def test_mcps_mime_type_and_uri_template_are_taken_for_their_fields(api: APIClient) -> None:
    resource = {**RESOURCE, "mimeType": "text/markdown"}
    del resource["mime_type"]
    assert api.post("/api/v1/resources/", resource, format="json").status_code == 201
    assert Resource.objects.get().mime_type == "text/markdown"
    template = {**TEMPLATE, "uriTemplate": "file:///days/{day}"}
    del template["uri_template"]
    assert api.post("/api/v1/resource-templates/", template, format="json").status_code == 201
    assert ResourceTemplate.objects.get().uri_template == "file:///days/{day}"


def test_an_mcp_name_and_the_field_it_names_sent_together_is_a_400(api: APIClient) -> None:
    body = {**TEMPLATE_TOOL, "inputSchema": {"type": "object"}}
    answer = api.post("/api/v1/tools/", body, format="json")
    assert answer.status_code == 400
    assert answer.json() == {
        "inputSchema": ["'inputSchema' is the MCP name of 'input_schema'; send one of them, not both."]
    }
    assert not Tool.objects.exists()


def test_an_mcp_name_where_the_kind_has_no_such_field_is_unknown(api: APIClient) -> None:
    answer = api.post("/api/v1/prompts/", {**PROMPT, "inputSchema": {}}, format="json")
    assert answer.status_code == 400 and answer.json()["inputSchema"][0].startswith("Unknown field")


@pytest.mark.parametrize(
    "url,field,value,expected",
    [
        ("/api/v1/tools/", "input_schema", [], "object"),
        ("/api/v1/tools/", "meta", "x", "object"),
        ("/api/v1/tools/", "tags", {"a": 1}, "array"),
        ("/api/v1/resource-templates/", "completions", ["day"], "object"),
        ("/api/v1/keys/", "tools", "echo", "array"),
        ("/api/v1/skills/", "frontmatter", [], "object"),
    ],
)
def test_a_json_field_of_the_wrong_json_type_is_a_field_error(
    api: APIClient, url: str, field: str, value: Any, expected: str
) -> None:
    answer = api.post(url, {**CREATES[url], field: value}, format="json")
    assert answer.status_code == 400, answer.content
    assert answer.json()[field][0].startswith(f"Expected a JSON {expected}, got ")


def test_a_form_post_is_checked_too_and_its_csrf_token_is_no_unknown_field(api: APIClient) -> None:
    # As the browsable API's HTML form posts (form-encoded, with its CSRF token).
    form = {"name": "formed", "kind": "template", "template_text": "hi", "csrfmiddlewaretoken": "x"}
    assert api.post("/api/v1/tools/", form).status_code == 201
    answer = api.post("/api/v1/tools/", {**form, "name": "other", "colour": "blue"})
    assert answer.status_code == 400 and list(answer.json()) == ["colour"]


def test_the_registry_import_refuses_unknown_members_too_with_their_json_pointer(api: APIClient) -> None:
    document = {"tools": [{**TEMPLATE_TOOL, "colour": "blue"}]}
    answer = api.post("/api/v1/registry/import", document, format="json")
    assert answer.status_code == 400
    assert {"path": "/tools/0/colour", "message": "Unknown field 'colour'."} in answer.json()["errors"]
    assert not Tool.objects.exists()
