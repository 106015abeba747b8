"""Listing an upstream: ``initialize`` (through ``connect``), then every page of tools, resources,
resource templates and prompts the upstream declared a capability for, as their wire JSON.

A listing is trusted to remove definitions only when it is ``complete``: every declared kind
listed to its last page, within the caps. A hostile or broken upstream can send a cursor that never
ends or a listing of a million tools: ``MAX_PAGES`` and ``MAX_DEFINITIONS`` stop it, and a listing
stopped that way is partial (nothing is marked missing).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .config import UpstreamConfig
from .errors import UpstreamError

if TYPE_CHECKING:  # the SDK is imported when an upstream is first listed (handshake.py says why)
    import mcp_types as types
    from mcp.client.session import ClientSession

MAX_PAGES = 100  # per kind
MAX_DEFINITIONS = 2000  # per kind
KINDS = ("tools", "resources", "templates", "prompts")


@dataclass
class Listing:
    definitions: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: {k: [] for k in KINDS})
    declared: set[str] = field(default_factory=set)  # the kinds the upstream has a capability for
    server_info: dict[str, Any] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)  # a page that failed, a cap reached
    error: str = ""  # the upstream could not be listed at all (connect, initialize)
    unauthorized: bool = False
    latency_ms: float | None = None

    @property
    def complete(self) -> bool:
        return not self.error and not self.problems

    def to_json(self) -> dict[str, Any]:
        return {"definitions": self.definitions, "declared": sorted(self.declared),
                "server_info": self.server_info}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Listing:
        return cls(definitions={k: list(data["definitions"].get(k, [])) for k in KINDS},
                   declared=set(data.get("declared", ())), server_info=dict(data.get("server_info", {})))


def _dump(item: Any) -> dict[str, Any]:
    return dict(item.model_dump(by_alias=True, mode="json", exclude_none=True))


async def _pages(kind: str, fetch: Callable[[str | None], Awaitable[tuple[list[Any], str | None]]],
                 listing: Listing) -> None:
    cursor: str | None = None
    out = listing.definitions[kind]
    for _ in range(MAX_PAGES):
        try:
            items, cursor = await fetch(cursor)
        except Exception as exc:  # a page that fails makes the listing partial, whatever the cause
            listing.problems.append(f"{kind}: a page failed ({type(exc).__name__}: {exc})")
            return
        out.extend(_dump(i) for i in items)
        if len(out) > MAX_DEFINITIONS:
            del out[MAX_DEFINITIONS:]
            listing.problems.append(f"{kind}: more than {MAX_DEFINITIONS} definitions (the cap)")
            return
        if not cursor:
            return
    listing.problems.append(f"{kind}: more than {MAX_PAGES} pages (the cap)")


def _params(cursor: str | None) -> types.PaginatedRequestParams | None:
    import mcp_types as types  # loaded by connect() by now

    return types.PaginatedRequestParams(cursor=cursor) if cursor else None


Page = tuple[list[Any], str | None]  # one page of a list: its items, the next cursor

# What is listed, in order: (our kind, the capability that declares it, the session's list method,
# the result's field). Templates are declared by the resources capability (server/resources).
LISTS = (
    ("tools", "tools", "list_tools", "tools"),
    ("resources", "resources", "list_resources", "resources"),
    ("templates", "resources", "list_resource_templates", "resource_templates"),
    ("prompts", "prompts", "list_prompts", "prompts"),
)


async def _list(session: ClientSession, listing: Listing) -> None:
    caps = session.server_capabilities
    for kind, capability, method, items in LISTS:
        if caps is None or getattr(caps, capability) is None:
            continue
        listing.declared.add(kind)

        async def page(c: str | None, method: str = method, items: str = items) -> Page:
            r = await getattr(session, method)(params=_params(c))
            return getattr(r, items), r.next_cursor

        await _pages(kind, page, listing)


async def fetch_listing(config: UpstreamConfig) -> Listing:
    """The upstream's definitions; never raises for the upstream's failures (``error``/``problems``)."""
    from .connect import connect  # the official SDK, loaded with the first listing
    from .errors import UpstreamUnauthorized

    listing = Listing()
    started = time.monotonic()
    try:
        async with connect(config) as session:
            listing.latency_ms = round((time.monotonic() - started) * 1000, 1)
            info = session.server_info
            listing.server_info = {
                "serverInfo": _dump(info) if info is not None else None,
                "protocolVersion": session.protocol_version,
                "capabilities": _dump(session.server_capabilities) if session.server_capabilities else {},
            }
            await _list(session, listing)
    except UpstreamError as exc:
        listing.error = str(exc)
        listing.unauthorized = isinstance(exc, UpstreamUnauthorized)
    except Exception as exc:  # a session that broke while listing: the upstream's failure, reported
        if not listing.error:
            listing.error = f"{config.name}: {type(exc).__name__}: {exc}"
    return listing
