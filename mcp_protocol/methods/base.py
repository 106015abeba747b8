"""What every method handler receives (``Call``) and the small parameter readers they share.

A handler is ``async def handler(call: Call) -> dict`` returning the JSON-RPC ``result`` object
shaped for ``call.version``; it raises ``MCPError`` subclasses for protocol errors. Era-specific
decoration (``resultType``, caching hints, ``_meta`` serverInfo) is added by ``server.py``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..approvals import Approvals
from ..auth.principal import Principal
from ..auth.scopes import view
from ..changefeed import ChangeFeed
from ..context import Context
from ..definitions import Snapshot, Tool
from ..endpoint_views import select
from ..endpoints import EndpointSpec, ToolSearch
from ..errors import InvalidParams
from ..pagination import Paginator
from ..provider import Provider
from ..request_state import RequestStateSealer
from ..session import Session
from ..tasks.runner import TaskRunner
from ..versions import is_modern
from .wire_cache import WireCache


class ServerView(Protocol):
    """What a handler uses of the ``Server`` (``server.py``), which imports the handlers: a narrow
    view, so the handlers import nothing of it."""

    provider: Provider
    paginator: Paginator
    wire_cache: WireCache
    feed: ChangeFeed
    name: str
    version: str
    title: str | None
    instructions: str | None
    request_state: RequestStateSealer
    tasks: TaskRunner | None  # None: this server makes no tasks
    endpoint: EndpointSpec | None  # the virtual server it answers as (endpoints.py); None: /mcp
    endpoint_key: str  # Session.endpoint of its sessions (endpoints.CATCH_ALL for /mcp)
    search_ranking: str  # how search_tools ranks (search.MODES)
    tool_search: ToolSearch  # its tool search mode (methods/tool_search.py)
    on_search: Callable[[str], None] | None  # counts a search, by server label (metrics)
    list_filter: bool  # SEP-2564's filter on tools/list is served (methods/list_filter.py)
    approvals: Approvals | None  # approval before risky calls (approvals.py); None: staff tools refused

    def capabilities(self, version: str, snapshot: Snapshot | None = None) -> dict[str, Any]: ...

    def server_info(self, version: str) -> dict[str, Any]: ...


@dataclass(slots=True)
class Call:
    """One request on its way down: who calls (``principal``, read once where the call is made,
    ``server.py``), what they may see (``snapshot``) and, for a ``tools/call``, its tool
    (``tool``), each resolved once and read by the guard and the handler alike."""

    server: ServerView
    session: Session
    ctx: Context
    params: dict[str, Any]
    version: str
    principal: Principal
    _snapshot: Snapshot | None = None
    _tools: dict[str, Tool | None] = field(default_factory=dict)

    @property
    def modern(self) -> bool:
        return is_modern(self.version)

    _full: Snapshot | None = None

    @property
    def snapshot(self) -> Snapshot:
        """What the calling principal may see (auth/scopes.py); everything in open mode."""
        # One snapshot per call so a listing or a call sees one consistent view.
        if self._snapshot is None:
            self._snapshot = view(self.full_snapshot, self.principal.grant)
        return self._snapshot

    def tool(self, name: str) -> Tool | None:
        """The tool ``name`` of this call's snapshot, looked up once (the guard's tool rate and
        the handler both ask)."""
        tools = self._tools
        if name not in tools:
            tools[name] = self.snapshot.tool(name)
        return tools[name]

    @property
    def full_snapshot(self) -> Snapshot:
        """Everything this endpoint serves, before the caller's grant: the whole snapshot on the
        catch-all ``/mcp``, a virtual server's selection of it (``endpoint_views.select``) on
        ``/mcp/<slug>``. What lies outside is as unknown to its callers as what does not exist."""
        if self._full is None:
            full = self.server.provider.snapshot()
            endpoint = self.server.endpoint
            self._full = full if endpoint is None else select(full, endpoint)
        return self._full


Handler = Callable[[Call], Awaitable[dict[str, Any]]]
# Wraps a handler: (method, call, handler) → result (auth/guard.py: limits and audit).
Interceptor = Callable[[str, Call, Handler], Awaitable[dict[str, Any]]]


def require_str(params: dict[str, Any], key: str) -> str:
    value = params.get(key)
    if not isinstance(value, str):
        raise InvalidParams(f"params.{key} must be a string")
    return value


def optional_object(params: dict[str, Any], key: str) -> dict[str, Any]:
    value = params.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InvalidParams(f"params.{key} must be an object")
    return value
