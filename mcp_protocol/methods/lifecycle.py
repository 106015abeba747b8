"""``initialize``, ``ping`` and ``server/discover`` ([L] basic/lifecycle.mdx; [26] server/discover).

``initialize`` mutates the session (negotiated version, client info and capabilities, state) and
marks it dirty so the transport persists it. The "must be first" / "only once" rules are enforced
by ``server.py`` before dispatch, because they apply to every method.
"""

from __future__ import annotations

from typing import Any

from .. import versions
from ..errors import InvalidRequest
from .base import Call, optional_object, require_str


async def initialize(call: Call) -> dict[str, Any]:
    session = call.session
    if session.state != "new":
        raise InvalidRequest("Invalid Request: the session is already initialized")
    requested = require_str(call.params, "protocolVersion")
    capabilities = optional_object(call.params, "capabilities")
    client_info = optional_object(call.params, "clientInfo")
    version = versions.negotiate(requested)
    session.protocol_version = version
    session.client_capabilities = capabilities
    session.client_info = client_info
    # "ready" on initialize: over HTTP the initialized notification and the next request race
    # (separate POSTs), and the spec only forbids requests *before the initialize response*.
    session.state = "ready"
    session.mark_dirty()
    server = call.server
    result: dict[str, Any] = {
        "protocolVersion": version,
        "capabilities": server.capabilities(version, call.full_snapshot),
        "serverInfo": server.server_info(version),  # the endpoint's own (endpoint_servers.py)
    }
    if server.instructions is not None:
        result["instructions"] = server.instructions
    return result


async def ping(call: Call) -> dict[str, Any]:
    """basic/utilities/ping.mdx: respond promptly with an empty result."""
    return {}


async def discover(call: Call) -> dict[str, Any]:
    """2026-07-28 server/discover: supported versions, capabilities, instructions."""
    server = call.server
    result: dict[str, Any] = {
        "supportedVersions": list(versions.SUPPORTED_NEWEST_FIRST),
        "capabilities": server.capabilities(call.version, call.full_snapshot),
    }
    if server.instructions is not None:
        result["instructions"] = server.instructions
    return result
