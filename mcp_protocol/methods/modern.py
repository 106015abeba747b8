"""The 2026-07-28 request envelope: per-request ``_meta`` → a transient, never-stored ``Session``.

2026-07-28 basic/index.mdx "Request Metadata": every request carries
``io.modelcontextprotocol/protocolVersion`` and ``…/clientCapabilities`` (missing → -32602), and
may carry ``…/clientInfo`` and ``…/logLevel`` (an unknown level → -32602, logging.mdx SHOULD). A
version this era does not serve → -32022 with ``data: {supported, requested}``.
"""

from __future__ import annotations

import itertools
from typing import Any

from .. import versions
from ..context import level_rank
from ..errors import UNSUPPORTED_PROTOCOL_VERSION, InvalidParams, UnsupportedVersion
from ..session import Session

META_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
META_LOG_LEVEL = "io.modelcontextprotocol/logLevel"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"
_stateless_ids = itertools.count(1)


def stateless_session(params: dict[str, Any] | None, principal: str | None) -> Session:
    """The transient session a 2026-07-28 request describes; raises the envelope's errors."""
    meta = (params or {}).get("_meta")
    if not isinstance(meta, dict):
        raise InvalidParams("Missing params._meta (required in 2026-07-28)")
    requested = meta.get(META_PROTOCOL_VERSION)
    if not isinstance(requested, str):
        raise InvalidParams(f"Missing _meta[{META_PROTOCOL_VERSION!r}]")
    if requested not in versions.MODERN_VERSIONS:
        raise UnsupportedVersion(
            f"Unsupported protocol version: {requested}",
            {"supported": list(versions.SUPPORTED_NEWEST_FIRST), "requested": requested},
            code=UNSUPPORTED_PROTOCOL_VERSION,
        )
    capabilities = meta.get(META_CLIENT_CAPABILITIES)
    if not isinstance(capabilities, dict):
        raise InvalidParams(f"Missing _meta[{META_CLIENT_CAPABILITIES!r}]")
    client_info = meta.get(META_CLIENT_INFO)
    if client_info is not None and not isinstance(client_info, dict):
        raise InvalidParams(f"_meta[{META_CLIENT_INFO!r}] must be an object")
    level = meta.get(META_LOG_LEVEL)
    if level is not None:
        if not isinstance(level, str):
            raise InvalidParams(f"_meta[{META_LOG_LEVEL!r}] must be a string")
        level_rank(level)
    return Session(
        # Never sent nor stored: only names the request's in-flight scope in this process, so a
        # counter serves (a random id cost a urandom call per request).
        id=f"stateless-{next(_stateless_ids)}",
        protocol_version=requested,
        client_info=client_info or {},
        client_capabilities=capabilities,
        log_level=level,
        principal=principal,
        state="ready",
        stateless=True,
    )


# 2026-07-28 server/utilities/caching.mdx: these complete results carry ttlMs + cacheScope.
CACHEABLE_METHODS = frozenset(
    {
        "server/discover",
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
        "skills/list",  # SEP-2640: list-caching attributes from 2026-07-28 (SEP-2549)
        "skills/get",
        "resources/read",
    }
)


def decorate_result(
    method: str, result: dict[str, Any], ttl_ms: int, cache_scope: str, server_info: dict[str, Any]
) -> None:
    """What every 2026-07-28 result carries: ``resultType`` (basic/index.mdx), caching hints on
    the cacheable complete results (caching.mdx; never on input_required), and the serverInfo
    in ``_meta`` (SHOULD, basic/index.mdx)."""
    result.setdefault("resultType", "complete")
    if method in CACHEABLE_METHODS and result["resultType"] == "complete":
        result.setdefault("ttlMs", ttl_ms)
        result.setdefault("cacheScope", cache_scope)
    meta = result.get("_meta")
    meta = dict(meta) if isinstance(meta, dict) else {}
    meta[META_SERVER_INFO] = server_info
    result["_meta"] = meta
