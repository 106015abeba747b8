"""Providers whose snapshots carry virtual servers (``mcp_protocol/endpoints.py``), for real server
processes (``LiveServer(provider=...)``) before the registry builds them from its rows:

- ``DemoServers``: the memory demo set with two servers, ``a`` (echo, add, the readme) and ``b``
  (countdown, ask_llm), and a disabled ``c`` that is therefore absent from every snapshot.
- ``EverythingServer``: the registry's snapshot (``load_conformance``) with one server,
  ``everything``, selecting every definition by name, so a client of ``/mcp/everything`` sees what
  one of ``/mcp`` sees (the conformance suite's run on a virtual endpoint).

And the in-process project of the virtual servers' tests: ``project()``, the routing of
``mcpsite/asgi.py`` with a stand-in for Django (299 and the path), and small request helpers.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from channels.routing import URLRouter
from django.urls import re_path

from mcp_django.routing import EndpointFirst, legacy_sse_paths, mcp_path, mcp_servers_path
from mcp_protocol.definitions import Snapshot
from mcp_protocol.endpoints import EndpointSpec, Selection
from mcp_protocol.memory_provider import MemoryProvider
from mcp_protocol.transports.http import MCPEndpoint
from registry.provider import RegistryProvider

from .asgi_call import JSON_POST, Headers, Reply, call

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


# -- in-process: the project's routing, and requests ------------------------------------------------
async def fallback(scope: Any, receive: Any, send: Any) -> None:
    """Django's place: 299 and the path, so a test sees the request went past the endpoint."""
    await send({"type": "http.response.start", "status": 299, "headers": []})
    await send({"type": "http.response.body", "body": scope["path"].encode()})


def project(default: str | None = None, endpoint: MCPEndpoint | None = None) -> EndpointFirst:
    route = mcp_path("mcp", endpoint) if endpoint else mcp_path("mcp", default_server=default)
    router = URLRouter([route, mcp_servers_path(route), *legacy_sse_paths(), re_path(r"", fallback)])
    return EndpointFirst(router, route, servers=True)


def rpc(method: str, params: dict[str, Any] | None = None, id: int = 1) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": id, "method": method, "params": params or {}}).encode()


def initialize(version: str = "2025-11-25") -> bytes:
    client = {"name": "t", "version": "1"}
    return rpc("initialize", {"protocolVersion": version, "capabilities": {}, "clientInfo": client})


async def session_on(app: Any, path: str, version: str = "2025-11-25") -> tuple[Reply, Headers]:
    reply = await call(app, initialize(version), path=path)
    assert reply.status == 200, reply
    sent = [
        (b"mcp-session-id", reply.headers[b"mcp-session-id"]),
        (b"mcp-protocol-version", version.encode()),
    ]
    return reply, [*JSON_POST, *sent]
