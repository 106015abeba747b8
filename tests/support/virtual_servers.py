"""Providers whose snapshots carry virtual servers (``mcp_protocol/endpoints.py``), for real server
processes (``LiveServer(provider=...)``) before the registry builds them from its rows:

- ``DemoServers``: the memory demo set with two servers, ``a`` (echo, add, the readme) and ``b``
  (countdown, ask_llm), and a disabled ``c`` that is therefore absent from every snapshot.
- ``EverythingServer``: the registry's snapshot (``load_conformance``) with one server,
  ``everything``, selecting every definition by name, so a client of ``/mcp/everything`` sees what
  one of ``/mcp`` sees (the conformance suite's run on a virtual endpoint).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from mcp_protocol.definitions import Snapshot
from mcp_protocol.endpoints import EndpointSpec, Selection
from mcp_protocol.memory_provider import MemoryProvider
from registry.provider import RegistryProvider

A = EndpointSpec(
    slug="a",
    name="server-a",
    version="2.0.0",
    title="Server A",
    instructions="Use A for echoes.",
    selection=Selection.of(tools={"echo", "add"}, resources={"demo://readme"}),
)
B = EndpointSpec(
    slug="b", name="server-b", instructions="B counts.",
    selection=Selection.of(tools={"countdown", "ask_llm"}),
)


class DemoServers(MemoryProvider):
    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.set_endpoints([A, B])


class EverythingServer(RegistryProvider):
    SLUG = "everything"

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self._seen: Snapshot | None = None
        self._served: Snapshot | None = None

    def snapshot(self) -> Snapshot:
        full = super().snapshot()
        if full is not self._seen or self._served is None:
            selection = Selection.of(
                tools=[t.name for t in full.tools],
                resources=[r.uri for r in full.resources],
                resource_templates=[t.uri_template for t in full.resource_templates],
                prompts=[p.name for p in full.prompts],
                skills=[s.root for s in full.skills],
            )
            spec = EndpointSpec(slug=self.SLUG, name="everything", title="Everything", selection=selection)
            self._served = dataclasses.replace(full, endpoints=(spec,))
            self._seen = full
        return self._served
