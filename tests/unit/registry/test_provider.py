"""RegistryProvider: serves an in-process snapshot, never the database, on the hot path."""

from __future__ import annotations

import asyncio
import base64
import json
from typing import Any

import pytest
from asgiref.sync import sync_to_async

from mcp_protocol.errors import InvalidParams, ResourceNotFound
from mcp_protocol.provider import Provider
from registry.models import Prompt, Tool
from registry.provider import RegistryProvider
from registry.snapshot import build_state

from .conftest import make_context

pytestmark = pytest.mark.django_db

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def test_it_implements_the_protocol_provider_interface() -> None:
    assert isinstance(RegistryProvider(), Provider)


def test_hot_path_makes_zero_database_queries(
    conformance: None, demo: None, provider: RegistryProvider, django_assert_num_queries: Any
) -> None:
    provider.rebuild()
    with django_assert_num_queries(0):
        snapshot = provider.snapshot()
        # 12 demo + 35 conformance, greet in both, the demo's http_post_example disabled
        assert len(snapshot.tools) == 45
        ctx = make_context()
        assert (
            run(provider.call_tool(snapshot.tool("echo"), {"message": "m"}, ctx))["content"][0]["text"] == "m"
        )
        assert run(provider.call_tool(snapshot.tool("test_simple_text"), {}, ctx))["content"]
        assert run(provider.read_resource("test://static-text", ctx))[0]["text"]
        assert run(provider.read_resource("test://template/7/data", ctx))[0]["text"]
        assert run(
            provider.get_prompt(
                snapshot.prompt("test_prompt_with_arguments"), {"arg1": "a", "arg2": "b"}, ctx
            )
        )
        assert run(
            provider.complete({"type": "ref/prompt", "name": "test_prompt_with_arguments"}, "arg1", "t", {})
        )


def test_building_the_state_takes_a_fixed_number_of_queries(
    conformance: None, demo: None, django_assert_max_num_queries: Any
) -> None:
    # +2: skills and their files (SEP-2640); +1: the virtual servers (issue 39)
    with django_assert_max_num_queries(9):
        build_state()


def test_listing_order_is_deterministic_and_disabled_rows_are_not_served(
    demo: None, provider: RegistryProvider
) -> None:
    names = [t.name for t in provider.snapshot().tools]
    assert names == sorted(names)
    Tool.objects.filter(name="echo").update(enabled=False)
    provider.mark_stale()  # the on_commit hook does this after a real commit
    assert "echo" not in [t.name for t in provider.snapshot().tools]


def test_snapshot_version_changes_with_the_data_only(demo: None) -> None:
    first, again = build_state().snapshot.version, build_state().snapshot.version
    assert first == again
    Tool.objects.filter(name="echo").update(description="changed")
    assert build_state().snapshot.version != first


def test_definitions_carry_the_metadata_fields(demo: None, provider: RegistryProvider) -> None:
    snapshot = provider.snapshot()
    echo = snapshot.tool("echo")
    assert echo.title == "Echo" and echo.annotations == {
        "readOnlyHint": True,
        "idempotentHint": True,
        "openWorldHint": False,
    }
    assert echo.icons and echo.icons[0]["mimeType"] == "image/png"
    assert snapshot.tool("text_stats").output_schema["required"] == ["characters", "words", "lines"]
    logo = snapshot.resource("demo://logo.png")
    assert logo.mime_type == "image/png" and logo.size == len(base64.b64decode(PNG))
    assert [t.uri_template for t in snapshot.resource_templates] == [
        "demo://greeting/{name}",
        "demo://users/{user_id}",
    ]
    review = snapshot.prompt("code_review")
    assert [(a.name, a.required) for a in review.arguments] == [
        ("language", True),
        ("code", True),
        ("focus", False),
    ]


def test_read_resource_serves_text_binary_handlers_and_templates(
    conformance: None, demo: None, provider: RegistryProvider
) -> None:
    provider.snapshot()
    ctx = make_context()
    assert run(provider.read_resource("test://static-binary", ctx)) == [
        {"uri": "test://static-binary", "mimeType": "image/png", "blob": PNG}
    ]
    assert run(provider.read_resource("test://template/123/data", ctx)) == [
        {
            "uri": "test://template/123/data",
            "mimeType": "application/json",
            "text": '{"id":"123","templateTest":true,"data":"Data for ID: 123"}',
        }
    ]
    assert run(provider.read_resource("demo://greeting/Ada%20L", ctx))[0]["text"].startswith("Hello, Ada L!")
    assert json.loads(run(provider.read_resource("demo://users/1", ctx))[0]["text"]) == {
        "id": "1",
        "name": "Ada Lovelace",
    }
    assert run(provider.read_resource("demo://server-time", ctx))[0]["mimeType"] == "text/plain"
    with pytest.raises(ResourceNotFound):
        run(provider.read_resource("test://nothing-here", ctx))
    with pytest.raises(ResourceNotFound):
        run(provider.read_resource("demo://users/999", ctx))  # the handler decides


def test_get_prompt_renders_every_content_type_from_the_arguments(
    conformance: None, demo: None, provider: RegistryProvider
) -> None:
    snapshot, ctx = provider.snapshot(), make_context()
    result = run(
        provider.get_prompt(snapshot.prompt("test_prompt_with_arguments"), {"arg1": "v1", "arg2": "v2"}, ctx)
    )
    assert result["messages"] == [
        {"role": "user", "content": {"type": "text", "text": "Prompt with arguments: arg1='v1', arg2='v2'"}}
    ]
    result = run(provider.get_prompt(snapshot.prompt("mixed_content"), {"topic": "cats"}, ctx))
    types = [m["content"]["type"] for m in result["messages"]]
    assert types == ["text", "image", "audio", "resource", "resource_link"]
    assert result["messages"][4]["content"]["uri"] == "demo://greeting/cats"
    assert result["messages"][3]["content"]["resource"]["text"] == "Notes on cats"
    # An optional argument left out renders as an empty string, not null.
    result = run(provider.get_prompt(snapshot.prompt("code_review"), {"language": "go", "code": "x"}, ctx))
    assert result["messages"][0]["content"]["text"] == "I review go code. Focus: "
    result = run(provider.get_prompt(snapshot.prompt("summarize_user"), {"user_id": "3"}, ctx))
    assert "Grace Hopper" in result["messages"][1]["content"]["text"]


def test_completion_from_stored_values_and_from_handlers(
    conformance: None, demo: None, provider: RegistryProvider
) -> None:
    provider.snapshot()
    found = run(provider.complete({"type": "ref/prompt", "name": "code_review"}, "language", "J", {}))
    assert found.values == ("javascript", "java") and found.total == 2 and not found.has_more
    found = run(provider.complete({"type": "ref/resource", "uri": "demo://greeting/{name}"}, "name", "a", {}))
    assert found.values == ("Ada", "Alan")
    found = run(
        provider.complete({"type": "ref/resource", "uri": "demo://users/{user_id}"}, "user_id", "4", {})
    )
    assert found.values == ("42",)
    found = run(provider.complete({"type": "ref/prompt", "name": "summarize_user"}, "user_id", "", {}))
    assert found.values == ("1", "2", "3", "42")
    assert (
        run(provider.complete({"type": "ref/prompt", "name": "test_simple_prompt"}, "none", "", {})).values
        == ()
    )
    with pytest.raises(InvalidParams):
        run(provider.complete({"type": "ref/prompt", "name": "no_such_prompt"}, "a", "", {}))
    with pytest.raises(InvalidParams):
        run(provider.complete({"type": "ref/resource", "uri": "x://{nope}"}, "a", "", {}))


def test_completion_returns_at_most_100_values(provider: RegistryProvider) -> None:
    prompt = Prompt.objects.create(name="many", description="d")
    prompt.arguments.create(name="n", completion_values=[f"v{i:03d}" for i in range(150)])
    provider.snapshot()
    found = run(provider.complete({"type": "ref/prompt", "name": "many"}, "n", "v", {}))
    assert len(found.values) == 100 and found.total == 150 and found.has_more


def test_inside_an_event_loop_an_unbuilt_provider_serves_nothing_without_querying(
    demo: None, django_assert_num_queries: Any
) -> None:
    provider = RegistryProvider()

    async def in_loop() -> int:
        return len(provider.snapshot().tools)

    with django_assert_num_queries(0):
        assert run(in_loop()) == 0


@pytest.mark.django_db(transaction=True)
def test_refresh_rebuilds_off_the_event_loop() -> None:
    Tool.objects.create(name="first", description="d", kind="template", template_text="x")
    provider = RegistryProvider()

    async def scenario() -> tuple[list[str], list[str], list[str]]:
        await provider.refresh()
        before = [t.name for t in provider.snapshot().tools]
        await sync_to_async(Tool.objects.create)(
            name="second", description="d", kind="template", template_text="y"
        )
        # Inside the loop a stale state is served as-is until refresh() (no ORM on the loop).
        stale = [t.name for t in provider.snapshot().tools]
        await provider.refresh()
        return before, stale, [t.name for t in provider.snapshot().tools]

    before, stale, after = run(scenario())
    assert before == ["first"] and stale == ["first"] and after == ["first", "second"]


def test_a_resource_without_a_mime_type_lists_and_reads_without_one(provider: RegistryProvider) -> None:
    from registry.models import Resource, ResourceTemplate

    Resource.objects.create(uri="x:text", name="text", kind="text", text="hello")
    Resource.objects.create(uri="x:bin", name="bin", kind="binary", blob=PNG)
    ResourceTemplate.objects.create(
        uri_template="x://t/{id}", name="tpl", kind="text", text_template="{{ id }}"
    )
    snapshot, ctx = provider.snapshot(), make_context()
    assert [(r.uri, r.mime_type) for r in snapshot.resources] == [("x:bin", None), ("x:text", None)]
    assert [t.mime_type for t in snapshot.resource_templates] == [None]
    assert run(provider.read_resource("x:text", ctx)) == [{"uri": "x:text", "text": "hello"}]
    assert run(provider.read_resource("x:bin", ctx)) == [{"uri": "x:bin", "blob": PNG}]
    assert run(provider.read_resource("x://t/7", ctx)) == [{"uri": "x://t/7", "text": "7"}]


def test_a_declared_mime_type_is_listed_and_read_back_the_same(provider: RegistryProvider) -> None:
    from registry.models import Resource

    Resource.objects.create(uri="x:md", name="md", kind="text", text="# hi", mime_type="text/markdown")
    assert provider.snapshot().resources[0].mime_type == "text/markdown"
    assert run(provider.read_resource("x:md", make_context()))[0]["mimeType"] == "text/markdown"


def test_the_snapshot_carries_the_enabled_virtual_servers_as_endpoint_specs_by_slug() -> None:
    from mcp_protocol.endpoints import EndpointAccess, EndpointSpec, Selection
    from registry.models import VirtualServer

    VirtualServer.objects.create(slug="zeta", name="Zeta")
    VirtualServer.objects.create(slug="off", name="Off", enabled=False)
    VirtualServer.objects.create(
        slug="alpha", name="Alpha", title="The alpha", server_version="2.1.0", instructions="Be brief.",
        icons=[{"src": "https://example.com/a.png"}], website_url="https://example.com/a",
        description="Docs tools", tools=["echo"], prompts=["greet"], skills=["skill://git"],
        include_tags=["docs"], exclude_tags=["write"], auth_modes=["keys", "oauth"],
        api_keys=["mcp_ab12"], oauth_scopes=["mcp:docs"], rate_limit="60/60",
    )
    snapshot = build_state().snapshot
    assert [e.slug for e in snapshot.endpoints] == ["alpha", "zeta"]
    assert snapshot.endpoint("off") is None
    assert snapshot.endpoint("alpha") == EndpointSpec(
        slug="alpha", name="Alpha", version="2.1.0", title="The alpha", instructions="Be brief.",
        icons=({"src": "https://example.com/a.png"},), website_url="https://example.com/a",
        description="Docs tools",
        selection=Selection.of(tools=["echo"], prompts=["greet"], skills=["skill://git"],
                               include_tags=["docs"], exclude_tags=["write"]),
        access=EndpointAccess(modes=frozenset({"keys", "oauth"}), keys=frozenset({"mcp_ab12"}),
                              scopes=frozenset({"mcp:docs"}), rate="60/60"),
    )
    # Blank optional fields are None, empty lists of keys and scopes are "any".
    assert snapshot.endpoint("zeta") == EndpointSpec(slug="zeta", name="Zeta", description=None)
