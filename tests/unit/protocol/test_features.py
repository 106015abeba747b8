"""What an endpoint advertises follows what it serves (issue 40 item 3; ``features.py``): an
endpoint of mirrored definitions only advertises the kinds it serves and what their upstreams
declared; one with a definition of our own advertises everything the provider offers."""

from __future__ import annotations

from mcp_protocol.definitions import Prompt, Resource, ResourceTemplate, Snapshot, Tool
from mcp_protocol.endpoint_views import select
from mcp_protocol.endpoints import EndpointSpec, Selection
from mcp_protocol.features import declared, narrowed
from mcp_protocol.memory_provider import MemoryProvider
from mcp_protocol.provider import ProviderCapabilities
from mcp_protocol.server import Server

SCHEMA = {"type": "object"}
ALL = ProviderCapabilities()
LOGS_ONLY = declared({"tools": {}, "logging": {}, "prompts": {}, "completions": {}})


def _snapshot(*tools: Tool, prompts: tuple[Prompt, ...] = (), resources: tuple[Resource, ...] = (),
              templates: tuple[ResourceTemplate, ...] = ()) -> Snapshot:
    return Snapshot(version="v", tools=tools, prompts=prompts, resources=resources,
                    resource_templates=templates,
                    sources={"up": LOGS_ONLY, "sub": declared({"resources": {"subscribe": True}})})


def test_mirrored_tools_only_advertise_tools_and_what_their_upstream_declared() -> None:
    snapshot = _snapshot(Tool("up_a", SCHEMA, origin="up"))
    caps = narrowed(ALL, snapshot)
    assert (caps.tools, caps.logging) == (True, True)
    # Declared by the upstream, but nothing of it here: no prompts, no completions.
    assert (caps.prompts, caps.resources, caps.completions, caps.resources_subscribe) == (False,) * 4
    server = Server(MemoryProvider(), name="s", version="1", cursor_secret=b"k" * 32)
    wire = server.capabilities("2025-11-25", snapshot)
    assert set(wire) >= {"tools", "logging"} and not {"prompts", "resources", "completions"} & set(wire)


def test_completions_need_prompts_or_templates_and_subscribe_needs_resources() -> None:
    snapshot = _snapshot(prompts=(Prompt("up_p", origin="up"),),
                         resources=(Resource("memo://a", "a", origin="sub"),))
    caps = narrowed(ALL, snapshot)
    assert caps.completions and caps.prompts and caps.resources and caps.resources_subscribe
    assert not caps.tools


def test_one_definition_of_ours_advertises_everything() -> None:
    snapshot = _snapshot(Tool("up_a", SCHEMA, origin="up"), Tool("mine", SCHEMA))
    assert narrowed(ALL, snapshot) == ALL
    assert narrowed(ALL, Snapshot(version="empty")) == ALL  # nothing at all: as before


def test_a_virtual_servers_view_follows_its_own_selection() -> None:
    snapshot = _snapshot(Tool("up_a", SCHEMA, origin="up"), Tool("mine", SCHEMA))
    endpoint = EndpointSpec(slug="m", name="m", selection=Selection.of(tools=["up_a"]))
    caps = narrowed(ALL, select(snapshot, endpoint))
    assert caps.tools and caps.logging and not caps.prompts and not caps.resources
