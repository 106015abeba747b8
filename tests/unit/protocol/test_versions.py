"""Per-revision constants, negotiation and wire shaping (each revision's schema.ts; checklist §1, §3)."""

from __future__ import annotations

import pytest

from mcp_protocol import versions
from mcp_protocol.definitions import Prompt, PromptArgument, Resource, ResourceTemplate, Tool

ICON = {"src": "https://example.com/i.png", "mimeType": "image/png"}
TOOL = Tool(
    "t",
    {"type": "object"},
    description="d",
    title="T",
    output_schema={"type": "object"},
    annotations={"readOnlyHint": True},
    icons=(ICON,),
    meta={"k": 1},
    execution={"taskSupport": "optional"},
)


def test_supported_versions_and_eras():
    assert versions.SUPPORTED_VERSIONS == {
        "2024-11-05",
        "2025-03-26",
        "2025-06-18",
        "2025-11-25",
        "2026-07-28",
    }
    assert versions.LATEST_LEGACY == "2025-11-25" and versions.LATEST == "2026-07-28"
    assert set(versions.LEGACY_VERSIONS) | set(versions.MODERN_VERSIONS) == versions.SUPPORTED_VERSIONS
    assert versions.is_modern("2026-07-28") and not versions.is_modern("2025-11-25")


@pytest.mark.parametrize(
    ("requested", "negotiated"),
    [
        ("2024-11-05", "2024-11-05"),
        ("2025-03-26", "2025-03-26"),
        ("2025-06-18", "2025-06-18"),
        ("2025-11-25", "2025-11-25"),
        ("2026-07-28", "2025-11-25"),
        ("2030-01-01", "2025-11-25"),
    ],
)
def test_negotiation(requested, negotiated):
    assert versions.negotiate(requested) == negotiated


def test_behaviour_switches():
    assert [versions.allows_batch(v) for v in versions.ORDER] == [False, True, False, False, False]
    assert [versions.sends_priming_event(v) for v in versions.ORDER] == [False, False, False, True, True]
    assert [versions.input_validation_is_tool_error(v) for v in versions.ORDER] == [
        False,
        False,
        False,
        True,
        True,
    ]
    assert [versions.resource_not_found_code(v) for v in versions.ORDER] == [-32002] * 4 + [-32602]


def test_tool_shaping_per_revision():
    shaped = {v: versions.tool_to_wire(TOOL, v) for v in versions.ORDER}
    assert set(shaped["2024-11-05"]) == {"name", "description", "inputSchema"}
    assert set(shaped["2025-03-26"]) == {"name", "description", "inputSchema", "annotations"}
    assert set(shaped["2025-06-18"]) == {
        "name",
        "description",
        "inputSchema",
        "annotations",
        "title",
        "outputSchema",
        "_meta",
    }
    assert set(shaped["2025-11-25"]) == set(shaped["2025-06-18"]) | {"icons", "execution"}
    # Tasks left the core for the extension io.modelcontextprotocol/tasks, whose clients read the
    # same execution.taskSupport hint.
    assert set(shaped["2026-07-28"]) == set(shaped["2025-06-18"]) | {"icons", "execution"}


def test_resource_template_and_prompt_shaping():
    resource = Resource(
        "a://b",
        "b",
        title="B",
        annotations={"priority": 1, "lastModified": "2025-01-01T00:00:00Z"},
        icons=(ICON,),
        meta={"m": 1},
    )
    old = versions.resource_to_wire(resource, "2024-11-05")
    assert old == {"uri": "a://b", "name": "b", "annotations": {"priority": 1}}
    new = versions.resource_to_wire(resource, "2025-11-25")
    assert new["title"] == "B" and new["icons"] == [ICON] and new["_meta"] == {"m": 1}
    assert new["annotations"]["lastModified"]
    template = ResourceTemplate("a://{x}", "x", title="X", icons=(ICON,))
    assert versions.template_to_wire(template, "2025-06-18") == {
        "uriTemplate": "a://{x}",
        "name": "x",
        "title": "X",
    }
    prompt = Prompt("p", "P", "desc", (PromptArgument("a", "A", "arg", True),), icons=(ICON,))
    assert versions.prompt_to_wire(prompt, "2025-03-26") == {
        "name": "p",
        "description": "desc",
        "arguments": [{"name": "a", "description": "arg", "required": True}],
    }
    assert versions.prompt_to_wire(prompt, "2025-11-25")["arguments"][0]["title"] == "A"


def test_content_blocks_a_revision_cannot_carry_are_degraded_to_text():
    audio = {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"}
    link = {"type": "resource_link", "uri": "a://b", "name": "b"}
    assert versions.content_to_wire(audio, "2024-11-05")["type"] == "text"
    assert versions.content_to_wire(audio, "2025-03-26") == audio
    assert versions.content_to_wire(link, "2025-03-26") == {
        "type": "text",
        "text": "[resource link omitted: not supported by this protocol version] a://b",
    }
    assert versions.content_to_wire(link, "2025-06-18") == link


def test_content_meta_and_last_modified_are_06_plus():
    block = {
        "type": "text",
        "text": "x",
        "_meta": {"a": 1},
        "annotations": {"priority": 0.5, "lastModified": "t"},
    }
    assert versions.content_to_wire(block, "2025-03-26") == {
        "type": "text",
        "text": "x",
        "annotations": {"priority": 0.5},
    }
    assert versions.content_to_wire(block, "2025-06-18") == block


def test_capabilities_completions_is_03_plus():
    kwargs = dict(
        tools=True,
        resources=True,
        resources_subscribe=False,
        prompts=False,
        completions=True,
        logging=False,
        list_changed=False,
    )
    assert versions.capabilities_to_wire(version="2024-11-05", **kwargs) == {
        "resources": {"subscribe": False, "listChanged": False},
        "tools": {"listChanged": False},
    }
    assert "completions" in versions.capabilities_to_wire(version="2025-03-26", **kwargs)


def test_resource_contents_carry_meta_from_2025_06_18():
    # 2025-03-26 schema.json ResourceContents = {uri, mimeType}; 2025-06-18 schema.ts adds _meta.
    assert [versions.has_resource_contents_meta(v) for v in versions.ORDER] == [
        False,
        False,
        True,
        True,
        True,
    ]
    block = {"type": "resource", "resource": {"uri": "a:b", "text": "x", "_meta": {"k": 1}}}
    assert versions.content_to_wire(block, "2025-03-26")["resource"] == {"uri": "a:b", "text": "x"}
    assert versions.content_to_wire(block, "2025-06-18") == block


def test_structured_content_must_be_an_object_only_in_2025_06_18_and_2025_11_25():
    assert [versions.structured_content_is_object(v) for v in versions.ORDER] == [
        False,  # no structuredContent at all
        False,
        True,
        True,
        False,  # SEP-2106: any JSON value
    ]


def test_progress_message_is_03_plus():
    assert [versions.has_progress_message(v) for v in versions.ORDER] == [False, True, True, True, True]


def test_modern_capabilities_promise_change_notifications_delivered_on_listen_streams():
    # 2026-07-28 clients receive them on subscriptions/listen streams.
    kwargs = dict(
        tools=True,
        resources=True,
        resources_subscribe=True,
        prompts=True,
        completions=True,
        logging=True,
        list_changed=True,
    )
    modern = versions.capabilities_to_wire(version="2026-07-28", **kwargs)
    assert modern["tools"] == {"listChanged": True}
    assert modern["prompts"] == {"listChanged": True}
    assert modern["resources"] == {"subscribe": True, "listChanged": True}
    legacy = versions.capabilities_to_wire(version="2025-11-25", **kwargs)
    assert legacy["resources"] == {"subscribe": True, "listChanged": True}
    assert legacy["tools"] == {"listChanged": True}
