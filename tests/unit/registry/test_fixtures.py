"""The demo and conformance fixture sets, loaded by management commands, with the exact outputs
of /work/shared/spec/conformance-fixtures.md §4."""

from __future__ import annotations

import asyncio
import json
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command

from mcp_protocol.methods.tools import execute_tool
from mcp_protocol.versions import LATEST
from registry.models import Prompt, Resource, ResourceTemplate, Tool
from registry.provider import RegistryProvider

from .conftest import make_context

pytestmark = pytest.mark.django_db

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
WAV = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="
CONFORMANCE_TOOLS = {
    # the io.modelcontextprotocol/tasks scenarios' (greet is the demo's, as it is)
    "greet",
    "slow_compute",
    "failing_job",
    "protocol_error_job",
    "confirm_delete",
    "multi_input",
    "test_tool_with_task",
    "test_simple_text",
    "test_image_content",
    "test_audio_content",
    "test_embedded_resource",
    "test_multiple_content_types",
    "test_tool_with_logging",
    "test_error_handling",
    "test_tool_with_progress",
    "test_sampling",
    "test_elicitation",
    "test_elicitation_sep1034_defaults",
    "test_elicitation_sep1330_enums",
    "json_schema_2020_12_tool",
    "test_reconnection",
    # 2026-07-28 scenarios of the 0.2.0 suite
    "test_input_required_result_elicitation",
    "test_input_required_result_sampling",
    "test_input_required_result_list_roots",
    "test_input_required_result_request_state",
    "test_input_required_result_multiple_inputs",
    "test_input_required_result_multi_round",
    "test_input_required_result_capabilities",
    "test_input_required_result_tampered_state",
    "test_missing_capability",
    "test_streaming_elicitation",
    "test_logging_tool",
    "test_trigger_tool_change",
    "test_trigger_prompt_change",
    "test_custom_headers",
}


def command(*args: Any, **options: Any) -> str:
    out = StringIO()
    call_command(*args, stdout=out, **options)
    return out.getvalue()


def counts() -> tuple[int, ...]:
    return tuple(m.objects.count() for m in (Tool, Resource, ResourceTemplate, Prompt))


def test_load_commands_are_idempotent() -> None:
    assert "changed: 12 tools" in command("load_demo")
    # 35 conformance tools, one of them the demo's greet as it is (the tasks scenarios' sync tool).
    assert "changed: 34 tools, 3 resources, 1 resource_templates, 5 prompts" in command("load_conformance")
    loaded = counts()
    assert "changed: 0 tools, 0 resources, 0 resource_templates, 0 prompts" in command("load_demo")
    assert "changed: 0 tools, 0 resources, 0 resource_templates, 0 prompts" in command("load_conformance")
    assert counts() == loaded
    assert "not empty" in command("load_demo", "--if-empty")


def test_load_restores_an_edited_fixture_row() -> None:
    command("load_conformance")
    Tool.objects.filter(name="test_simple_text").update(template_text="edited")
    Prompt.objects.get(name="test_simple_prompt").messages.all().delete()
    assert "changed: 1 tools, 0 resources, 0 resource_templates, 1 prompts" in command("load_conformance")


def test_seed_tools_creates_n_template_tools_once() -> None:
    assert "100 tools created" in command("seed_tools", "--count", "100")
    assert "0 tools created, 100 already there" in command("seed_tools", "--count", "100")
    assert Tool.objects.filter(name__startswith="seed_").count() == 100


def test_every_fixture_tool_and_prompt_has_a_description() -> None:
    command("load_demo")
    command("load_conformance")
    assert not Tool.objects.filter(description="").exists()
    assert not Prompt.objects.filter(description="").exists()


@pytest.fixture
def served(conformance: None) -> RegistryProvider:
    provider = RegistryProvider()
    provider.snapshot()
    return provider


def call(
    provider: RegistryProvider, name: str, arguments: dict[str, Any] | None = None, **ctx: Any
) -> dict[str, Any]:
    return asyncio.run(
        execute_tool(provider, provider.snapshot().tool(name), arguments or {}, make_context(**ctx), LATEST)
    )


def test_conformance_tools_are_exactly_the_expected_set(served: RegistryProvider) -> None:
    assert {t.name for t in served.snapshot().tools} == CONFORMANCE_TOOLS
    schema = served.snapshot().tool("json_schema_2020_12_tool").input_schema
    assert schema == {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "$anchor": "addressDef",
                "type": "object",
                "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
            }
        },
        "properties": {
            "name": {"type": "string"},
            "address": {"$ref": "#/$defs/address"},
            "contactMethod": {"type": "string", "enum": ["phone", "email"]},
            "phone": {"type": "string"},
            "email": {"type": "string"},
        },
        # SEP-2106: composition, conditional and $anchor keywords kept end to end.
        "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
        "then": {"required": ["phone"]},
        "else": {"required": ["email"]},
        "additionalProperties": False,
    }


def test_conformance_content_tools_return_the_reference_outputs(served: RegistryProvider) -> None:
    assert call(served, "test_simple_text")["content"] == [
        {"type": "text", "text": "This is a simple text response for testing."}
    ]
    assert call(served, "test_image_content")["content"] == [
        {"type": "image", "data": PNG, "mimeType": "image/png"}
    ]
    assert call(served, "test_audio_content")["content"] == [
        {"type": "audio", "data": WAV, "mimeType": "audio/wav"}
    ]
    assert call(served, "test_embedded_resource")["content"] == [
        {
            "type": "resource",
            "resource": {
                "uri": "test://embedded-resource",
                "mimeType": "text/plain",
                "text": "This is an embedded resource content.",
            },
        }
    ]
    assert call(served, "test_multiple_content_types")["content"] == [
        {"type": "text", "text": "Multiple content types test:"},
        {"type": "image", "data": PNG, "mimeType": "image/png"},
        {
            "type": "resource",
            "resource": {
                "uri": "test://mixed-content-resource",
                "mimeType": "application/json",
                "text": '{"test":"data","value":123}',
            },
        },
    ]
    assert call(served, "test_error_handling") == {
        "isError": True,
        "content": [{"type": "text", "text": "This tool intentionally returns an error for testing"}],
    }


def test_conformance_elicitation_tools_send_the_expected_schemas(served: RegistryProvider) -> None:
    caps = {"elicitation": {}}
    answer = {"elicitation/create": {"action": "accept", "content": {"name": "Jane Smith"}}}
    ctx = make_context(capabilities=caps, answers=answer)
    result = asyncio.run(
        served.call_tool(served.snapshot().tool("test_elicitation_sep1034_defaults"), {}, ctx)
    )
    assert result["content"][0]["text"].startswith("Elicitation completed: action=accept, content=")
    props = ctx.outbound.requests[0][1]["requestedSchema"]["properties"]  # type: ignore[attr-defined]
    assert {k: (v["type"], v["default"]) for k, v in props.items()} == {
        "name": ("string", "John Doe"),
        "age": ("integer", 30),
        "score": ("number", 95.5),
        "status": ("string", "active"),
        "verified": ("boolean", True),
    }
    assert props["status"]["enum"] == ["active", "inactive", "pending"]

    ctx = make_context(capabilities=caps, answers=answer)
    asyncio.run(served.call_tool(served.snapshot().tool("test_elicitation_sep1330_enums"), {}, ctx))
    props = ctx.outbound.requests[0][1]["requestedSchema"]["properties"]  # type: ignore[attr-defined]
    assert props["untitledSingle"] == {
        "type": "string",
        "description": "Select one option",
        "enum": ["option1", "option2", "option3"],
    }
    assert [o["const"] for o in props["titledSingle"]["oneOf"]] == ["value1", "value2", "value3"]
    assert "enum" not in props["titledSingle"]
    assert len(props["legacyEnum"]["enum"]) == len(props["legacyEnum"]["enumNames"]) == 3
    assert props["untitledMulti"]["items"] == {"type": "string", "enum": ["option1", "option2", "option3"]}
    assert [o["title"] for o in props["titledMulti"]["items"]["anyOf"]] == [
        "First Choice",
        "Second Choice",
        "Third Choice",
    ]

    ctx = make_context(
        capabilities=caps,
        answers={
            "elicitation/create": {
                "action": "accept",
                "content": {"username": "testuser", "email": "test@example.com"},
            }
        },
    )
    result = asyncio.run(
        served.call_tool(
            served.snapshot().tool("test_elicitation"), {"message": "Please provide your information"}, ctx
        )
    )
    sent = ctx.outbound.requests[0][1]  # type: ignore[attr-defined]
    assert sent["message"] == "Please provide your information"
    assert sent["requestedSchema"]["required"] == ["username", "email"]
    assert json.loads(result["content"][0]["text"].split(", ", 1)[1]) == {
        "username": "testuser",
        "email": "test@example.com",
    }


def test_conformance_reconnection_tool_runs_about_two_seconds_and_can_be_cancelled(
    served: RegistryProvider,
) -> None:
    ctx = make_context()

    async def cancel_soon() -> dict[str, Any]:
        task = asyncio.ensure_future(served.call_tool(served.snapshot().tool("test_reconnection"), {}, ctx))
        await asyncio.sleep(0.15)
        ctx.cancel_event.set()
        return await asyncio.wait_for(task, 2)

    from mcp_protocol.errors import RequestCancelled

    with pytest.raises(RequestCancelled):
        asyncio.run(cancel_soon())


def test_conformance_resources_prompts_and_completion(served: RegistryProvider) -> None:
    snapshot, ctx = served.snapshot(), make_context()
    assert [r.uri for r in snapshot.resources] == [
        "test://static-binary",
        "test://static-text",
        "test://watched-resource",
    ]
    assert [t.uri_template for t in snapshot.resource_templates] == ["test://template/{id}/data"]
    assert asyncio.run(served.read_resource("test://static-text", ctx)) == [
        {
            "uri": "test://static-text",
            "mimeType": "text/plain",
            "text": "This is the content of the static text resource.",
        }
    ]
    assert (
        asyncio.run(served.read_resource("test://watched-resource", ctx))[0]["text"]
        == "Watched resource content"
    )
    result = asyncio.run(served.get_prompt(snapshot.prompt("test_simple_prompt"), {}, ctx))
    assert result["messages"] == [
        {"role": "user", "content": {"type": "text", "text": "This is a simple prompt for testing."}}
    ]
    result = asyncio.run(
        served.get_prompt(
            snapshot.prompt("test_prompt_with_embedded_resource"),
            {"resourceUri": "test://example-resource"},
            ctx,
        )
    )
    assert result["messages"][0]["content"] == {
        "type": "resource",
        "resource": {
            "uri": "test://example-resource",
            "mimeType": "text/plain",
            "text": "Embedded resource content for testing.",
        },
    }
    result = asyncio.run(served.get_prompt(snapshot.prompt("test_prompt_with_image"), {}, ctx))
    assert result["messages"][0]["content"] == {"type": "image", "data": PNG, "mimeType": "image/png"}
    assert [
        (a.name, a.required, a.description) for a in snapshot.prompt("test_prompt_with_arguments").arguments
    ] == [("arg1", True, "First test argument"), ("arg2", True, "Second test argument")]
    found = asyncio.run(
        served.complete({"type": "ref/prompt", "name": "test_prompt_with_arguments"}, "arg1", "test", {})
    )
    assert found.values == ("test", "testValue1", "testing")


def test_ensure_dev_admin_creates_one_superuser_in_debug_only(settings: Any) -> None:
    from django.contrib.auth import get_user_model

    settings.DEBUG = False
    assert "DEBUG is off" in command("ensure_dev_admin")
    assert not get_user_model().objects.exists()
    settings.DEBUG = True
    assert "user 'admin', password 'admin'" in command("ensure_dev_admin")
    assert "already exists" in command("ensure_dev_admin")
    admin = get_user_model().objects.get()
    assert admin.is_superuser and admin.check_password("admin")


def test_conformance_template_stays_valid_json_when_the_id_holds_a_quote_or_backslash(
    served: RegistryProvider,
) -> None:
    ctx = make_context()
    [item] = asyncio.run(served.read_resource("test://template/a%22b%5Cc/data", ctx))
    assert json.loads(item["text"]) == {"id": 'a"b\\c', "templateTest": True, "data": 'Data for ID: a"b\\c'}


def test_the_first_run_demo_has_the_bundled_skills_and_an_app() -> None:
    """scripts/serve.sh runs ``load_demo --if-empty``: a newcomer sees skills and an MCP App
    without running ``load_skills`` (issue 37)."""
    from registry.models import Skill

    assert "4 skills" in command("load_demo", "--if-empty")
    assert list(Skill.objects.values_list("path", flat=True)) == [
        "acme/billing/refunds", "git-workflow", "pdf-processing", "pdf-processing/form-filler"
    ]
    logo = Skill.objects.get(path="pdf-processing").files.get(path="assets/logo.png")
    assert logo.is_binary and bytes(logo.data).startswith(b"\x89PNG")
    app = Tool.objects.get(name="greeting_card")
    assert app.enabled and Resource.objects.get(uri=app.ui_resource_uri).enabled
    assert "0 skills" in command("load_demo")  # idempotent: nothing written again


def test_the_demo_has_two_virtual_servers_a_newcomer_can_connect_to() -> None:
    """Issue 39: /mcp/docs serves what is tagged docs (and a skill), /mcp/ops a selection by name
    that excludes the docs tag; /mcp serves everything as before."""
    from mcp_protocol.endpoint_views import select

    assert "2 servers" in command("load_demo")
    snapshot = RegistryProvider().snapshot()
    docs, ops = snapshot.endpoint("docs"), snapshot.endpoint("ops")
    assert docs is not None and ops is not None
    served = select(snapshot, docs)
    assert [t.name for t in served.tools] == ["echo", "greet", "text_stats"]
    assert [r.uri for r in served.resources] == ["demo://logo.png", "demo://readme"]
    assert [t.uri_template for t in served.resource_templates] == ["demo://greeting/{name}"]
    assert [p.name for p in served.prompts] == ["code_review"]
    assert [s.path for s in served.skills] == ["git-workflow"]
    served = select(snapshot, ops)
    ops_tools = ["ask_user", "count_down", "list_roots", "log_levels", "region_lookup"]
    assert [t.name for t in served.tools] == ops_tools
    assert [r.uri for r in served.resources] == ["demo://server-time"]
    assert [p.name for p in served.prompts] == ["summarize_user"]
    assert (ops.name, ops.instructions is not None) == ("mcpsite-ops", True)
    assert len(snapshot.tools) == 11  # the catch-all: every enabled tool, as before
    assert "0 servers" in command("load_demo")
