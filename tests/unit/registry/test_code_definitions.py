"""Tools, resources and prompts written in Python (registry.code): schemas from type hints,
descriptions from docstrings, the context, and serving beside the database's rows from the
same in-process snapshot (no query on the hot path)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

import pytest
from typing_extensions import TypedDict

from mcp_protocol import validation
from mcp_protocol.errors import InvalidParams
from mcp_protocol.methods.tools import execute_tool
from mcp_protocol.versions import LATEST
from registry.code import Context, ToolError, definitions, prompt, resource, tool
from registry.models import Tool
from registry.provider import RegistryProvider

from .conftest import make_context

pytestmark = pytest.mark.django_db


class Forecast(TypedDict):
    city: str
    celsius: float


@dataclass
class Point:
    x: int
    y: int = 0


async def forecast(city: str, days: int = 1, unit: Literal["c", "f"] = "c") -> Forecast:
    """The weather ahead.

    Args:
        city: Where, as on a map.
        days: How many days
            ahead (1-7).
    """
    return {"city": city, "celsius": 21.5}


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


async def slow_count(steps: int, ctx: Context) -> str:
    for step in range(steps):
        await ctx.report_progress(step + 1, steps)
    await ctx.log("info", f"counted {steps}")
    return f"counted {steps}"


async def confirm(item: str, ctx: Context) -> str:
    answer = await ctx.elicit(
        {
            "message": f"Really delete {item}?",
            "requestedSchema": {
                "type": "object",
                "properties": {"sure": {"type": "boolean"}},
                "required": ["sure"],
            },
        }
    )
    return "deleted" if answer.get("action") == "accept" and answer["content"]["sure"] else "kept"


def distance(origin: Point) -> float:
    return float(abs(origin.x) + abs(origin.y))


def refuse(reason: str) -> str:
    raise ToolError(f"refused: {reason}")


def note(note_id: int) -> str:
    """A note by number."""
    return f"note {note_id + 1}"


def motd() -> bytes:
    return b"\x00hello"


def review(code: str, strict: bool = False) -> str:
    """Review a change.

    Args:
        code: The diff.
    """
    return f"Review {'strictly' if strict else 'kindly'}:\n{code}"


FUNCTIONS = (forecast, add, slow_count, confirm, distance, refuse, note, motd, review)


@pytest.fixture
def code() -> Iterator[None]:
    tool(forecast)
    tool(name="math.add", title="Add", annotations={"readOnlyHint": True})(add)
    tool(slow_count)
    tool(confirm)
    tool(distance)
    tool(refuse)
    resource("notes://{note_id}", mime_type="text/plain", completions={"note_id": [1, 2, 12]})(note)
    resource("motd://today", mime_type="application/octet-stream")(motd)
    prompt(completions={"strict": ["true", "false"]})(review)
    yield
    for func in FUNCTIONS:
        definitions.forget(func)


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def test_typed_parameters_and_docstrings_become_the_tool_definition(code: None) -> None:
    snapshot = RegistryProvider().snapshot()
    weather = snapshot.tool("forecast")
    assert weather is not None and weather.description == "The weather ahead."
    schema = dict(weather.input_schema)
    assert schema["type"] == "object" and schema["required"] == ["city"]
    assert schema["properties"]["city"]["description"] == "Where, as on a map."
    assert schema["properties"]["days"]["description"] == "How many days ahead (1-7)."
    assert schema["properties"]["unit"]["enum"] == ["c", "f"]
    assert weather.output_schema is not None and weather.output_schema["required"] == ["city", "celsius"]
    assert validation.errors(weather.input_schema, {"city": "Oslo", "days": "x"})
    assert not validation.errors(weather.input_schema, {"city": "Oslo", "days": 3})
    added = snapshot.tool("math.add")
    assert added is not None and added.title == "Add" and added.annotations == {"readOnlyHint": True}
    # A number is not an object: wrapped as {"result": ...} (server/tools.mdx "Output Schema").
    assert added.output_schema == {
        "type": "object",
        "properties": {"result": {"type": "integer"}},
        "required": ["result"],
    }


def test_calls_return_structured_content_validated_by_the_output_schema(code: None) -> None:
    provider, ctx = RegistryProvider(), make_context()
    snapshot = provider.snapshot()
    added = run(provider.call_tool(snapshot.tool("math.add"), {"a": 2, "b": 3}, ctx))
    assert added["structuredContent"] == {"result": 5} and added["content"][0]["text"] == "5"
    weather = run(provider.call_tool(snapshot.tool("forecast"), {"city": "Oslo"}, ctx))
    assert weather["structuredContent"] == {"city": "Oslo", "celsius": 21.5}
    assert not validation.errors(snapshot.tool("forecast").output_schema, weather["structuredContent"])
    far = run(provider.call_tool(snapshot.tool("distance"), {"origin": {"x": 3, "y": -4}}, ctx))
    assert far["structuredContent"] == {"result": 7.0}


def test_a_tool_error_and_a_bad_argument_are_results_with_is_error(code: None) -> None:
    provider, ctx = RegistryProvider(), make_context()
    snapshot = provider.snapshot()
    refused = run(execute_tool(provider, snapshot.tool("refuse"), {"reason": "no"}, ctx, LATEST))
    assert refused == {"content": [{"type": "text", "text": "refused: no"}], "isError": True}
    bad = run(execute_tool(provider, snapshot.tool("math.add"), {"a": "two", "b": 1}, ctx, LATEST))
    assert bad["isError"] is True and "a:" in bad["content"][0]["text"]


def test_the_context_reports_progress_and_logs(code: None) -> None:
    provider = RegistryProvider()
    ctx = make_context(progress_token="t", log_level="debug")
    result = run(provider.call_tool(provider.snapshot().tool("slow_count"), {"steps": 2}, ctx))
    assert result["content"][0]["text"] == "counted 2"
    sent = ctx.outbound.notifications  # type: ignore[attr-defined]
    assert [m for m, _ in sent] == ["notifications/progress"] * 2 + ["notifications/message"]
    assert "ctx" not in provider.snapshot().tool("slow_count").input_schema["properties"]  # type: ignore[union-attr]


def test_the_context_asks_the_client_through_elicitation(code: None) -> None:
    provider = RegistryProvider()
    answers = {"elicitation/create": {"action": "accept", "content": {"sure": True}}}
    ctx = make_context(answers=answers, capabilities={"elicitation": {}})
    result = run(provider.call_tool(provider.snapshot().tool("confirm"), {"item": "x"}, ctx))
    assert result["content"][0]["text"] == "deleted"
    assert ctx.outbound.requests[0][0] == "elicitation/create"  # type: ignore[attr-defined]


def test_resources_and_templates_read_from_code(code: None) -> None:
    provider, ctx = RegistryProvider(), make_context()
    snapshot = provider.snapshot()
    assert [t.uri_template for t in snapshot.resource_templates] == ["notes://{note_id}"]
    assert snapshot.resource_templates[0].description == "A note by number."
    assert run(provider.read_resource("notes://41", ctx)) == [
        {"uri": "notes://41", "mimeType": "text/plain", "text": "note 42"}
    ]
    assert run(provider.read_resource("motd://today", ctx))[0]["blob"] == "AGhlbGxv"
    with pytest.raises(InvalidParams):
        run(provider.read_resource("notes://abc", ctx))


def test_prompts_take_string_arguments_converted_to_their_types(code: None) -> None:
    provider = RegistryProvider()
    definition = provider.snapshot().prompt("review")
    assert definition is not None
    assert [(a.name, a.required, a.description) for a in definition.arguments] == [
        ("code", True, "The diff."),
        ("strict", False, None),
    ]
    result = run(provider.get_prompt(definition, {"code": "+x", "strict": "true"}, make_context()))
    assert result == {
        "messages": [{"role": "user", "content": {"type": "text", "text": "Review strictly:\n+x"}}],
        "description": "Review a change.",
    }


def test_code_prompts_and_templates_complete_their_arguments(code: None) -> None:
    provider = RegistryProvider()
    provider.rebuild()  # outside the event loop, as refresh() does before serving
    prompt_ref = {"type": "ref/prompt", "name": "review"}
    assert run(provider.complete(prompt_ref, "strict", "t", {})).values == ("true",)
    template_ref = {"type": "ref/resource", "uri": "notes://{note_id}"}
    assert run(provider.complete(template_ref, "note_id", "1", {})).values == ("1", "12")
    with pytest.raises(TypeError, match="not its arguments"):
        prompt(name="other", completions={"nope": ["x"]})(review)


def test_code_and_database_definitions_are_listed_together_in_name_order(code: None) -> None:
    Tool.objects.create(name="echo", kind="template", template_text="{{ message }}")
    Tool.objects.create(name="zeta", kind="template", template_text="z")
    names = [t.name for t in RegistryProvider().snapshot().tools]
    assert names == sorted(names) and {"echo", "zeta", "forecast", "math.add"} <= set(names)


def test_a_database_row_with_a_code_name_is_not_served(code: None, caplog: pytest.LogCaptureFixture) -> None:
    Tool.objects.create(name="forecast", kind="template", template_text="from the database")
    provider = RegistryProvider()
    served = provider.snapshot().tool("forecast")
    assert served is not None and served.description == "The weather ahead."
    assert "defined in code" in caplog.text
    result = run(provider.call_tool(served, {"city": "Oslo"}, make_context()))
    assert result["structuredContent"]["city"] == "Oslo"


def test_names_are_checked_and_taken_once(code: None) -> None:
    with pytest.raises(ValueError, match="Name must be"):
        tool(name="has space")(add)
    with pytest.raises(ValueError, match="already defined by"):
        tool(name="forecast")(add)
    tool(forecast)  # the same function again (autoreload, a second import): fine
    with pytest.raises(TypeError, match="not variables"):
        resource("notes://{other}")(note)
    with pytest.raises(TypeError, match=r"\*args"):
        tool(name="varargs")(lambda *args: None)


def test_a_clash_with_a_stored_row_is_a_database_system_check_error(code: None) -> None:
    from registry.checks import check_code_names

    assert check_code_names(databases=["default"]) == []
    Tool.objects.create(name="forecast", kind="template", template_text="x")
    Tool.objects.create(name="math.add", kind="template", template_text="x", enabled=False)
    messages = check_code_names(databases=["default"])
    assert [m.id for m in messages] == ["registry.E002"]
    assert "forecast" in messages[0].msg and "test_code_definitions.forecast" in messages[0].msg
    assert "Rename or disable" in (messages[0].hint or "")
    assert check_code_names(databases=None) == []  # not a static check: it reads the database


def test_the_admin_and_api_validation_refuse_a_name_defined_in_code(code: None) -> None:
    from django.core.exceptions import ValidationError

    row = Tool(name="math.add", kind="template", template_text="x")
    with pytest.raises(ValidationError) as caught:
        row.full_clean()
    assert "defined in code" in str(caught.value.message_dict["name"])
    Tool(name="subtract", kind="template", template_text="x").full_clean()


@pytest.mark.parametrize(
    ("model", "shown"),
    [
        ("tool", ["forecast", "math.add"]),
        ("resourcetemplate", ["notes://{note_id}"]),
        ("resource", ["motd://today"]),
        ("prompt", ["review"]),
    ],
)
def test_the_admin_lists_code_definitions_read_only_beside_the_rows(
    code: None, admin_client: Any, model: str, shown: list[str]
) -> None:
    from django.urls import reverse

    html = admin_client.get(reverse(f"admin:registry_{model}_changelist")).content.decode()
    assert 'id="code-definitions"' in html and "Defined in code (read-only)" in html
    for key in shown:
        assert f"<td>{key}</td>" in html
    assert "tests.unit.registry.test_code_definitions." in html
    if model == "tool":
        assert "&quot;inputSchema&quot;" in html  # the wire JSON a client receives


def test_an_admin_without_code_definitions_shows_no_code_section(admin_client: Any) -> None:
    from django.urls import reverse

    html = admin_client.get(reverse("admin:registry_tool_changelist")).content.decode()
    assert 'id="code-definitions"' not in html


def test_the_rest_api_refuses_a_name_defined_in_code(code: None, admin_user: Any) -> None:
    from rest_framework.test import APIClient

    api = APIClient()
    api.force_login(admin_user)
    body = {"name": "forecast", "kind": "template", "template_text": "x", "input_schema": {"type": "object"}}
    response = api.post("/api/v1/tools/", body, format="json")
    assert response.status_code == 400
    assert "defined in code" in str(response.json()["name"])
    assert not Tool.objects.filter(name="forecast").exists()
