"""The interface the protocol asks definitions from, and runs them through.

The registry app implements it from the database (named by the ``MCP["PROVIDER"]`` setting);
``mcp_protocol.memory_provider`` implements it in memory for unit tests and the stdio command.

Contract, for every implementation:

- ``snapshot()`` is synchronous, cheap and never touches a database: it returns the current
  immutable ``Snapshot``. It is called on every list and call, so it is the hot path.
- ``call_tool`` receives arguments the core has already validated against the tool's
  ``inputSchema``; it returns a ``CallToolResult`` dict (``content``, optional
  ``structuredContent``, optional ``isError``) or raises ``ToolError``. The core validates
  ``structuredContent`` against ``outputSchema`` afterwards.
- ``read_resource`` returns the ``contents`` list for a URI (a listed resource or one matching a
  template) or raises ``ResourceNotFound``.
- ``get_prompt`` receives the arguments after the core checked the required ones; it returns a
  ``GetPromptResult`` dict (``messages``, optional ``description``).
- ``complete`` returns values for a prompt argument (``ref/prompt``) or template variable
  (``ref/resource``), or raises ``InvalidParams`` for an unknown ref.
- Long-running work checks ``ctx.cancelled`` / awaits normally; the core cancels the task.
- ``start`` / ``stop`` (optional, no-ops by default) bracket serving on one event loop: the HTTP
  runtime and the stdio transport await them on their loop, so a provider can keep per-loop
  resources (the registry's pooled HTTP client for http tools, its reconciler of changes the bus
  missed) for exactly as long as it serves.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .definitions import Completion, Prompt, Snapshot, Tool

if TYPE_CHECKING:
    from .bus.base import Bus
    from .context import Context


@dataclass(frozen=True, slots=True)
class ProviderCapabilities:
    """Which server features the provider offers; the core declares exactly these."""

    tools: bool = True
    resources: bool = True
    resources_subscribe: bool = True
    prompts: bool = True
    completions: bool = True
    logging: bool = True
    list_changed: bool = True
    skills: bool = False  # the extension io.modelcontextprotocol/skills (SEP-2640)


class Provider(ABC):
    capabilities: ProviderCapabilities = ProviderCapabilities()
    _refreshing: asyncio.Future[None] | None = None

    @property
    def refreshing(self) -> asyncio.Future[None] | None:
        """The rebuild under way for a change this worker already received (``mark_refreshing``),
        or None. Requests wait for it before they read the snapshot (``Server._run``)."""
        return self._refreshing

    def mark_refreshing(self, rebuild: asyncio.Future[None]) -> None:
        """``rebuild`` (a ``refresh`` that never raises) runs for a change just received: the
        fan-out writes ``list_changed`` without waiting for it, so a client that re-lists on this
        worker right after the notification waits for the rebuild instead of seeing the old list."""
        self._refreshing = rebuild
        rebuild.add_done_callback(self._refreshed)

    def _refreshed(self, rebuild: asyncio.Future[None]) -> None:
        if self._refreshing is rebuild:
            self._refreshing = None

    @abstractmethod
    def snapshot(self) -> Snapshot: ...

    async def refresh(self) -> None:  # noqa: B027 - optional hook, a no-op by default
        """Rebuild the snapshot from the source of truth (may query a database, off the hot path).

        Transports await it once before serving the first request and run it again whenever a
        change is published on the bus (``mark_refreshing``: requests wait for it), so a client
        that re-lists after ``list_changed`` sees the change on this worker. Default: nothing to
        rebuild.
        """

    async def start(self, bus: Bus | None) -> None:  # noqa: B027 - optional hook, a no-op by default
        """A transport starts serving on the running loop (the HTTP runtime, stdio), once it is
        subscribed to the bus ``changes`` channel and has refreshed. Acquire what serving on this
        loop needs (the registry opens its pooled HTTP client for http tools) and start what runs
        beside serving: a provider whose source of truth may change without a message on ``bus``
        (a publish lost between commit and bus, another key prefix, another process with an
        in-memory bus) looks for such changes and publishes them on ``bus`` itself, so they are
        served and notified like any other. One provider may serve several loops, each transport
        calling this on its own. Default: nothing."""

    async def stop(self) -> None:  # noqa: B027 - optional hook, a no-op by default
        """The transport of the running loop closes: release and stop what ``start`` did on it."""

    @abstractmethod
    async def call_tool(self, tool: Tool, arguments: dict[str, Any], ctx: Context) -> dict[str, Any]: ...

    @abstractmethod
    async def read_resource(self, uri: str, ctx: Context) -> list[dict[str, Any]]: ...

    @abstractmethod
    async def get_prompt(
        self, prompt: Prompt, arguments: Mapping[str, str], ctx: Context
    ) -> dict[str, Any]: ...

    @abstractmethod
    async def complete(
        self,
        ref: Mapping[str, Any],
        argument_name: str,
        value: str,
        context_arguments: Mapping[str, str],
    ) -> Completion: ...
