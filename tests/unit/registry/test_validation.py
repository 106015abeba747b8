"""Model validation shared by the admin, the API and full_clean(): each rule, good and bad."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.exceptions import ValidationError
from django.test import override_settings

from registry.models import Prompt, PromptArgument, PromptMessage, Resource, ResourceTemplate, Tool

pytestmark = pytest.mark.django_db

EMPTY = {"type": "object", "properties": {}}


def tool(**fields: Any) -> Tool:
    defaults: dict[str, Any] = {
        "name": "t",
        "description": "d",
        "kind": "template",
        "template_text": "x",
        "input_schema": EMPTY,
    }
    return Tool(**{**defaults, **fields})


def errors_of(instance: Any) -> dict[str, list[str]]:
    with pytest.raises(ValidationError) as info:
        instance.full_clean()
    return info.value.message_dict


@pytest.mark.parametrize("name", ["a", "get_weather", "v1.tools-list", "A" * 128, "x_Y.z-0"])
def test_good_tool_names_are_accepted(name: str) -> None:
    tool(name=name).full_clean()


@pytest.mark.parametrize("name", ["", "has space", "ümlaut", "slash/name", "A" * 129, "colon:name"])
def test_bad_tool_names_are_a_field_error_that_says_the_rule(name: str) -> None:
    errors = errors_of(tool(name=name))
    assert "name" in errors
    assert any("1-128" in message or "blank" in message or "at most" in message for message in errors["name"])


def test_tool_names_are_unique() -> None:
    tool(name="same").save()
    assert "already exists" in errors_of(tool(name="same"))["name"][0]


def test_input_schema_must_be_an_object_schema() -> None:
    assert 'type": "object' in errors_of(tool(input_schema={"type": "string"}))["input_schema"][0]
    assert "JSON object" in errors_of(tool(input_schema=["not", "a", "dict"]))["input_schema"][0]


def test_input_schema_must_be_valid_json_schema_2020_12() -> None:
    message = errors_of(tool(input_schema={"type": "object", "properties": {"a": {"type": "strin"}}}))[
        "input_schema"
    ][0]
    assert "Not a valid JSON Schema 2020-12 at /properties/a/type" in message
    message = errors_of(tool(input_schema={"type": "object", "required": "a"}))["input_schema"][0]
    assert "required" in message


def test_input_schema_with_another_dialect_is_refused_and_2020_12_features_are_kept() -> None:
    old = {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"}
    assert "2020-12" in errors_of(tool(input_schema=old))["input_schema"][0]
    modern = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {"a": {"type": "string"}},
        "properties": {"x": {"$ref": "#/$defs/a"}},
        "additionalProperties": False,
    }
    tool(input_schema=modern).full_clean()


def test_output_schema_is_optional_but_must_be_an_object_schema() -> None:
    tool(output_schema=None).full_clean()
    tool(
        output_schema={"type": "object", "properties": {"n": {"type": "integer"}}},
        template_structured={"n": 1},
    ).full_clean()
    assert "output_schema" in errors_of(tool(output_schema={"type": "array"}, template_structured=[]))


def header_schema(prop: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": "object", "properties": {"p": prop}, **extra}


@pytest.mark.parametrize(
    "schema",
    [
        header_schema({"type": "string", "x-mcp-header": "Region"}),
        header_schema({"type": "integer", "x-mcp-header": "Tenant-Id"}),
        header_schema({"type": "boolean", "x-mcp-header": "dry_run"}),
        {
            "type": "object",
            "properties": {
                "o": {"type": "object", "properties": {"q": {"type": "string", "x-mcp-header": "Q"}}}
            },
        },
    ],
)
def test_valid_x_mcp_header_annotations_are_accepted(schema: dict[str, Any]) -> None:
    tool(input_schema=schema).full_clean()


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        (header_schema({"type": "number", "x-mcp-header": "Price"}), "integer, string or boolean"),
        (header_schema({"type": "string", "x-mcp-header": ""}), "RFC 9110 token"),
        (header_schema({"type": "string", "x-mcp-header": "Bad Name"}), "RFC 9110 token"),
        (header_schema({"type": "string", "x-mcp-header": "Bad\r\nName"}), "RFC 9110 token"),
        (
            {
                "type": "object",
                "properties": {
                    "a": {"type": "string", "x-mcp-header": "Dup"},
                    "b": {"type": "string", "x-mcp-header": "dup"},
                },
            },
            "duplicates",
        ),
        (
            {
                "type": "object",
                "properties": {"a": {"type": "array", "items": {"type": "string", "x-mcp-header": "I"}}},
            },
            "reachable through 'properties'",
        ),
        (
            {"type": "object", "properties": {"a": {"anyOf": [{"type": "string", "x-mcp-header": "A"}]}}},
            "reachable through 'properties'",
        ),
        (
            {"type": "object", "$defs": {"d": {"type": "string", "x-mcp-header": "D"}}},
            "reachable through 'properties'",
        ),
        ({"type": "object", "x-mcp-header": "Root"}, "reachable through 'properties'"),
        (header_schema({"type": "integer", "x-mcp-header": "Big", "maximum": 2**60}), "2^53"),
    ],
)
def test_bad_x_mcp_header_annotations_are_refused_with_the_reason(
    schema: dict[str, Any], expected: str
) -> None:
    messages = errors_of(tool(input_schema=schema))["input_schema"]
    assert any(expected in m for m in messages), messages


@override_settings(REGISTRY_HTTP_ALLOWED_HOSTS=["example.com"])
def test_each_tool_kind_requires_its_settings() -> None:
    assert "handler" in errors_of(tool(kind="handler", handler=""))
    assert "is registered" in errors_of(tool(kind="handler", handler="no.such.handler"))["handler"][0]
    tool(kind="handler", handler="demo.echo").full_clean()
    assert "http_url" in errors_of(tool(kind="http", http_url=""))
    assert "absolute http" in errors_of(tool(kind="http", http_url="ftp://example.com/x"))["http_url"][0]
    assert "http_secret_env" in errors_of(
        tool(kind="http", http_url="https://example.com/x", http_secret_header="X-Key")
    )
    tool(
        kind="http", http_url="https://example.com/x", http_secret_header="X-Key",
        http_secret_env="MCP_TOOL_SECRET_API_KEY",
    ).full_clean()
    assert "template_text" in errors_of(tool(kind="template", template_text=""))


@pytest.mark.parametrize(
    "uri",
    [
        "test://static-text",
        "file:///etc/hosts",
        "https://example.com/a?b=c#d",
        "urn:isbn:0451450523",
        "demo://x/%20y",
    ],
)
def test_good_resource_uris_are_accepted(uri: str) -> None:
    Resource(uri=uri, name="r", kind="text", text="x").full_clean()


@pytest.mark.parametrize(
    ("uri", "expected"),
    [
        ("no-scheme", "scheme"),
        ("/relative/path", "scheme"),
        ("test://has space", "not allowed"),
        ("test://x<y>", "not allowed"),
        ("test://bad%zz", "two hex digits"),
    ],
)
def test_bad_resource_uris_are_a_field_error(uri: str, expected: str) -> None:
    assert expected in errors_of(Resource(uri=uri, name="r", kind="text", text="x"))["uri"][0]


def test_resource_kinds_require_their_content() -> None:
    assert "blob" in errors_of(Resource(uri="a:b", name="r", kind="binary", blob=""))
    assert "base64" in errors_of(Resource(uri="a:b", name="r", kind="binary", blob="***"))["blob"][0]
    assert "handler" in errors_of(Resource(uri="a:b", name="r", kind="handler", handler="nope"))
    Resource(uri="a:b", name="r", kind="handler", handler="demo.server_time").full_clean()


@pytest.mark.parametrize(
    "template",
    [
        "test://template/{id}/data",
        "file:///{+path}",
        "x://a{/seg*}{?q,lang}",
        "x://{a,b}.{fmt}",
        "x://{var:3}",
    ],
)
def test_good_uri_templates_are_accepted(template: str) -> None:
    ResourceTemplate(uri_template=template, name="t", kind="text", text_template="x").full_clean()


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("x://{id", "unclosed"),
        ("x://id}", "unmatched"),
        ("x://{}", "empty expression"),
        ("x://{=id}", "reserved"),
        ("x://{a b}", "variable name"),
        ("x://{a:0}", "':<1-9999>'"),
        ("x://fixed", "at least one"),
        ("{id}", "absolute URI"),
    ],
)
def test_bad_uri_templates_are_a_field_error(template: str, expected: str) -> None:
    errors = errors_of(ResourceTemplate(uri_template=template, name="t", kind="text", text_template="x"))
    assert expected in errors["uri_template"][0], errors


def test_template_completions_and_placeholders_must_name_template_variables() -> None:
    row = ResourceTemplate(
        uri_template="x://{id}",
        name="t",
        kind="text",
        text_template="{{ nope }}",
        completions={"other": ["1"]},
    )
    errors = errors_of(row)
    assert "other" in errors["completions"][0]
    assert "nope" in errors["text_template"][0]


@pytest.mark.parametrize(
    ("icons", "ok"),
    [
        (
            [
                {
                    "src": "https://example.com/i.png",
                    "mimeType": "image/png",
                    "sizes": ["48x48", "any"],
                    "theme": "dark",
                }
            ],
            True,
        ),
        ([{"src": "data:image/png;base64,AAAA"}], True),
        ([{"src": "javascript:alert(1)"}], False),
        ([{"mimeType": "image/png"}], False),
        ([{"src": "https://e/i.png", "sizes": "48x48"}], False),
        ([{"src": "https://e/i.png", "theme": "blue"}], False),
        ({"src": "https://e/i.png"}, False),
    ],
)
def test_icons_follow_the_icon_shape(icons: Any, ok: bool) -> None:
    row = tool(icons=icons)
    if ok:
        row.full_clean()
    else:
        assert "icons" in errors_of(row)


def test_annotations_are_checked() -> None:
    tool(annotations={"readOnlyHint": True, "title": "T"}).full_clean()
    assert "true or false" in errors_of(tool(annotations={"readOnlyHint": "yes"}))["annotations"][0]
    assert "Unknown" in errors_of(tool(annotations={"dangerous": True}))["annotations"][0]
    Resource(uri="a:b", name="r", text="x", annotations={"audience": ["user"], "priority": 0.5}).full_clean()
    assert (
        "priority"
        in errors_of(Resource(uri="a:b", name="r", text="x", annotations={"priority": 3}))["annotations"][0]
    )


def test_prompt_children_are_validated() -> None:
    prompt = Prompt.objects.create(name="p", description="d")
    PromptArgument(prompt=prompt, name="arg", completion_values=["a", "b"]).full_clean()
    assert "completion_values" in errors_of(PromptArgument(prompt=prompt, name="arg", completion_values=[1]))
    assert "name" in errors_of(PromptArgument(prompt=prompt, name="bad name"))
    PromptMessage(prompt=prompt, role="user", content={"type": "text", "text": "{{ arg }}"}).full_clean()
    assert (
        "needs data"
        in errors_of(PromptMessage(prompt=prompt, role="user", content={"type": "image"}))["content"][0]
    )
    assert (
        "type"
        in errors_of(PromptMessage(prompt=prompt, role="user", content={"type": "video"}))["content"][0]
    )
    assert "role" in errors_of(
        PromptMessage(prompt=prompt, role="system", content={"type": "text", "text": "x"})
    )


@pytest.mark.parametrize(
    "content",
    [
        {"type": "text", "text": ""},
        {"type": "text", "text": "Hi {{ name }}", "annotations": {"audience": ["user"]}, "_meta": {"k": 1}},
        {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
        {"type": "image", "data": "{{ picture }}", "mimeType": "{{ kind }}"},
        {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"},
        {
            "type": "resource_link",
            "uri": "file:///a.txt",
            "name": "a",
            "title": "A",
            "description": "d",
            "mimeType": "text/plain",
            "size": 12,
            "icons": [{"src": "https://example.com/i.png"}],
        },
        {"type": "resource_link", "uri": "{{ target }}", "name": "n"},
        {"type": "resource", "resource": {"uri": "x:a", "mimeType": "text/plain", "text": "t"}},
        {"type": "resource", "resource": {"uri": "x:b", "blob": "AAAA", "_meta": {}}},
    ],
)
def test_well_formed_content_blocks_of_every_type_are_accepted(content: dict[str, Any]) -> None:
    prompt = Prompt.objects.create(name="p", description="d")
    PromptMessage(prompt=prompt, role="user", content=content).full_clean()


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("just text", "must be a JSON object, not a string"),
        ({"type": ["text"]}, "Content 'type' must be one of"),
        ({"type": "text"}, "A text content block needs text."),
        ({"type": "text", "text": 5}, "'text' must be a string, not a number"),
        ({"type": "text", "text": None}, "'text' must be a string, not null"),
        ({"type": "text", "text": "x", "extra": 1}, "unknown keys: extra"),
        ({"type": "text", "text": "x", "annotations": "high"}, "'annotations': must be an object"),
        ({"type": "text", "text": "x", "annotations": {"audience": [{}]}}, '"audience" must be a list'),
        ({"type": "text", "text": "x", "annotations": {"priority": 2}}, '"priority" must be a number'),
        ({"type": "text", "text": "x", "_meta": []}, "'_meta': must be an object"),
        ({"type": "image", "data": 5, "mimeType": "image/png"}, "'data' must be a string, not a number"),
        ({"type": "image", "data": ["AAAA"], "mimeType": "image/png"}, "'data' must be a string, not a list"),
        ({"type": "image", "data": "AAAA", "mimeType": 7}, "'mimeType' must be a string"),
        ({"type": "image", "data": "AAAA", "mimeType": "png"}, "is not a media type"),
        ({"type": "image", "data": "", "mimeType": "image/png"}, "'data' must not be empty"),
        ({"type": "image", "data": "***", "mimeType": "image/png"}, "Not valid base64 data."),
        (
            {"type": "audio", "data": {"b": 1}, "mimeType": "audio/wav"},
            "'data' must be a string, not an object",
        ),
        ({"type": "audio", "data": "AAAA"}, "An audio content block needs mimeType."),
        ({"type": "resource_link", "uri": 1, "name": "n"}, "'uri' must be a string"),
        ({"type": "resource_link", "uri": "no scheme", "name": "n"}, "is not an absolute URI"),
        ({"type": "resource_link", "uri": "x:a", "name": ""}, "'name' must not be empty"),
        ({"type": "resource_link", "uri": "x:a", "name": "n", "title": False}, "'title' must be a string"),
        ({"type": "resource_link", "uri": "x:a", "name": "n", "size": "12"}, "'size' must be a whole number"),
        ({"type": "resource_link", "uri": "x:a", "name": "n", "size": -1}, "'size' must be a whole number"),
        ({"type": "resource_link", "uri": "x:a", "name": "n", "icons": {}}, "'icons': must be a list"),
        (
            {"type": "resource_link", "uri": "x:a", "name": "n", "mimeType": ""},
            "'mimeType' must not be empty",
        ),
        ({"type": "resource", "resource": "x:a"}, "('resource') must be an object, not a string"),
        ({"type": "resource", "resource": {"uri": "x:a"}}, "exactly one of 'text' or 'blob'"),
        ({"type": "resource", "resource": {"uri": "x:a", "text": "t", "blob": "AA=="}}, "exactly one"),
        ({"type": "resource", "resource": {"uri": 3, "text": "t"}}, "'uri' must be a string"),
        ({"type": "resource", "resource": {"uri": "x:a", "text": ["t"]}}, "'text' must be a string"),
        ({"type": "resource", "resource": {"uri": "x:a", "blob": 1}}, "'blob' must be a string"),
        ({"type": "resource", "resource": {"uri": "x:a", "blob": "!!"}}, "Not valid base64 data."),
        ({"type": "resource", "resource": {"uri": "x:a", "text": "t", "mimeType": "t"}}, "not a media type"),
        ({"type": "resource", "resource": {"uri": "x:a", "text": "t", "size": 1}}, "unknown keys: size"),
    ],
)
def test_every_malformed_content_block_is_a_content_field_error_saying_what_is_wrong(
    content: Any, expected: str
) -> None:
    prompt = Prompt.objects.create(name="p", description="d")
    messages = errors_of(PromptMessage(prompt=prompt, role="user", content=content))["content"]
    assert any(expected in m for m in messages), messages


@pytest.mark.parametrize(
    "mime_type",
    ["", "text/plain", "application/vnd.api+json", "text/plain; charset=utf-8", 'text/html;profile="a b"'],
)
def test_media_types_of_type_slash_subtype_are_accepted(mime_type: str) -> None:
    Resource(uri="a:b", name="r", text="x", mime_type=mime_type).full_clean()
    ResourceTemplate(uri_template="x://{id}", name="t", text_template="x", mime_type=mime_type).full_clean()


@pytest.mark.parametrize("mime_type", ["text", "text/", "/plain", "text/plain;", "text plain", "*/*", "ä/b"])
def test_a_media_type_that_is_not_type_slash_subtype_is_a_field_error(mime_type: str) -> None:
    message = errors_of(Resource(uri="a:b", name="r", text="x", mime_type=mime_type))["mime_type"][0]
    assert "is not a media type" in message and "RFC 6838" in message
    row = ResourceTemplate(uri_template="x://{id}", name="t", text_template="x", mime_type=mime_type)
    assert "mime_type" in errors_of(row)
    assert "icons" in errors_of(tool(icons=[{"src": "https://e/i.png", "mimeType": mime_type}]))


@pytest.mark.parametrize("text", ["", "  \n"])
def test_a_text_template_resource_needs_a_non_blank_template(text: str) -> None:
    row = ResourceTemplate(uri_template="x://{id}", name="t", kind="text", text_template=text)
    assert "needs a text template" in errors_of(row)["text_template"][0]
    ResourceTemplate(
        uri_template="x://{id}", name="t", kind="handler", handler="demo.user_profile"
    ).full_clean()


def test_a_template_tool_with_only_whitespace_and_no_structured_template_is_refused() -> None:
    assert "template_text" in errors_of(tool(kind="template", template_text="  "))
    tool(kind="template", template_text="", template_structured={"n": 1}).full_clean()


@pytest.mark.parametrize(
    "prop",
    [
        {"type": ["string", "null"], "x-mcp-header": "A"},
        {"type": ["null", "integer"], "x-mcp-header": "A", "maximum": 10},
        {"type": "integer", "x-mcp-header": "A", "enum": [1, -(2**53 - 1), 2**53 - 1], "default": 1},
    ],
)
def test_x_mcp_header_allows_a_nullable_primitive_and_integers_within_range(prop: dict[str, Any]) -> None:
    tool(input_schema=header_schema(prop)).full_clean()


@pytest.mark.parametrize(
    ("prop", "expected"),
    [
        ({"type": ["string", "integer"], "x-mcp-header": "A"}, "integer, string or boolean"),
        ({"type": ["number", "null"], "x-mcp-header": "A"}, "integer, string or boolean"),
        ({"type": ["null"], "x-mcp-header": "A"}, "integer, string or boolean"),
        ({"x-mcp-header": "A"}, "integer, string or boolean"),
        ({"type": "integer", "x-mcp-header": "A", "enum": [1, 2**53]}, "enum value 9007199254740992"),
        ({"type": "integer", "x-mcp-header": "A", "enum": [-(2**60)]}, "enum value"),
        ({"type": ["integer", "null"], "x-mcp-header": "A", "enum": [2**53, None]}, "enum value"),
        ({"type": "integer", "x-mcp-header": "A", "default": 2**53}, "default is outside ±(2^53-1)"),
        ({"type": "integer", "x-mcp-header": "A", "const": -(2**53)}, "const is outside"),
        ({"type": "integer", "x-mcp-header": "A", "minimum": -1e300}, "minimum is outside"),
    ],
)
def test_x_mcp_header_type_unions_and_integers_out_of_range_are_field_errors(
    prop: dict[str, Any], expected: str
) -> None:
    messages = errors_of(tool(input_schema=header_schema(prop)))["input_schema"]
    assert any(expected in m for m in messages), messages


@pytest.mark.parametrize("declared", [[], {"a": 1}, [["string"]], [{"x": 1}]])
def test_x_mcp_header_rules_on_their_own_never_crash_on_an_odd_type(declared: Any) -> None:
    # full_clean() reports these as invalid JSON Schema first; the rules must still not raise a
    # TypeError (unhashable list/dict) when called alone.
    from registry.validation.x_mcp_header import validate_x_mcp_headers

    with pytest.raises(ValidationError, match="integer, string or boolean"):
        validate_x_mcp_headers(header_schema({"type": declared, "x-mcp-header": "A"}))
