"""``RegistryProvider``: the protocol's ``Provider`` interface, served from the database.

The hot path (``snapshot``, ``call_tool`` dispatch, ``read_resource``, ``get_prompt``,
``complete``) reads only an in-process ``RegistryState`` (see ``snapshot.py``) and never queries
the database. The state is rebuilt:

- by ``await refresh()``, which transports call before serving and whenever a change arrives on
  the bus (the ORM runs in a worker thread);
- synchronously, by the next ``snapshot()`` outside an event loop (admin, shell, tests) once the
  state is stale: ``changes.publish`` marks every in-process provider stale after a commit.

Changes whose bus message never came are found in the database by a ``reconcile.Reconciler`` that
``start`` runs beside the transport (every ``REGISTRY_RECONCILE_SECONDS``) and published again.

Inside a running event loop ``snapshot()`` never touches the ORM: it serves the last state (or an
empty one, with a warning, if ``refresh()`` was never awaited).

Tool failures come back as results with ``isError: true``: a failed server→client request, and
(logged with its traceback, message kept generic) any unexpected exception of a handler. A
``ToolError`` propagates, as the ``Provider`` interface says: the core's ``execute_tool`` turns it
into its result, in one place. Cancellation propagates.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Mapping
from typing import Any

from asgiref.sync import sync_to_async
from django.db import close_old_connections

from mcp_protocol.bus.base import Bus
from mcp_protocol.context import Context
from mcp_protocol.definitions import Completion, Prompt, Snapshot, Tool
from mcp_protocol.errors import (
    ClientRequestError,
    InvalidParams,
    MCPError,
    RequestCancelled,
    ResourceNotFound,
    ToolError,
)
from mcp_protocol.provider import Provider, ProviderCapabilities

from . import handlers, kinds
from .changes import publish as changes
from .changes import reconcile
from .code import serving
from .kinds.http_client.clients import UpstreamClients
from .serving.results import contents_item, prompt_result, resource_contents, text_block
from .serving.specs import EMPTY, RegistryState, ToolSpec
from .snapshot import build_state
from .upstreams import serve as upstream_kind
from .upstreams.pool import UpstreamSessions
from .validation.templating import render_json, render_text

logger = logging.getLogger(__name__)

MAX_COMPLETION_VALUES = 100  # server/utilities/completion.mdx: at most 100 values per response


def _in_event_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


class RegistryProvider(Provider):
    capabilities = ProviderCapabilities(skills=True)  # SEP-2640, served from the snapshot

    def __init__(self, **options: Any) -> None:
        self.options = options
        self._state: RegistryState | None = None
        self._stale = False
        self._lock = threading.Lock()
        self._warned_unbuilt = False
        self.upstream = UpstreamClients()  # the http kind's pooled clients, one per serving loop
        # The upstream kind's pooled MCP sessions, one per upstream per serving loop (issue 40).
        self.upstream_sessions = UpstreamSessions()
        self._reconcilers: list[reconcile.Reconciler] = []
        self._upstream_syncs: list[Any] = []  # upstreams/periodic.PeriodicSync, one per serving loop
        self._upstream_keepers: list[Any] = []  # upstreams/keeper.Keeper, one per serving loop
        changes.track(self)

    # -- a transport starts and stops serving on its loop ------------------------------------------
    async def start(self, bus: Bus | None) -> None:
        self.upstream.open()
        self.upstream_sessions.open()
        await self._start_upstream_sync()
        every = reconcile.interval()
        if bus is None or every <= 0:
            return
        # Changes the bus missed: looked for in the database and published on ``bus``.
        reconciler = reconcile.Reconciler(self, bus, every, reconcile.settle())
        await reconciler.start()
        self._reconcilers.append(reconciler)  # one per transport (runtime) that started it

    async def stop(self) -> None:
        # This event loop's reconciler and pooled client (a process may run one per loop).
        loop = asyncio.get_running_loop()
        mine = [r for r in self._reconcilers if r.loop is loop]
        self._reconcilers = [r for r in self._reconcilers if r.loop is not loop]
        for reconciler in mine:
            await reconciler.stop()
        syncs = [s for s in self._upstream_syncs if s.loop is loop]
        self._upstream_syncs = [s for s in self._upstream_syncs if s.loop is not loop]
        for sync in syncs:
            await sync.stop()
        keepers = [k for k in self._upstream_keepers if k.loop is loop]
        self._upstream_keepers = [k for k in self._upstream_keepers if k.loop is not loop]
        for keeper in keepers:
            await keeper.stop()
        await self.upstream.close()
        await self.upstream_sessions.close()

    async def _start_upstream_sync(self) -> None:
        """Keeping upstream MCP servers current (issue 40): the periodic sync
        (``upstreams/periodic.py``: one worker per upstream and interval) and the listen streams
        (``upstreams/keeper.py``: one worker per upstream under a lease), through the event
        store's shared claims."""
        from mcp_django.conf import mcp_settings

        from .upstreams import health, keeper, periodic

        health.watch_breakers()  # a breaker opening is the upstream's health going down
        claims = lambda: mcp_settings.backend("EVENT_STORE").claims  # noqa: E731
        every = periodic.tick()
        if every > 0:
            sync = periodic.PeriodicSync(claims, every)
            await sync.start()
            self._upstream_syncs.append(sync)
        # The listen streams under a lease, one worker each, and the sync on list_changed.
        lease = keeper.lease()
        if lease > 0:
            keeping = keeper.Keeper(claims, lease=lease, debounce=keeper.debounce())
            await keeping.start()
            self._upstream_keepers.append(keeping)

    # -- the snapshot ----------------------------------------------------------------------------
    def mark_stale(self) -> None:
        self._stale = True

    def state(self) -> RegistryState:
        state = self._state
        if state is not None and not self._stale:
            return state
        if _in_event_loop():
            if state is None:
                if not self._warned_unbuilt:
                    logger.warning(
                        "RegistryProvider used in an event loop before `await refresh()`: serving nothing"
                    )
                    self._warned_unbuilt = True
                return EMPTY
            return state
        return self.rebuild()

    def snapshot(self) -> Snapshot:
        return self.state().snapshot

    def rebuild(self) -> RegistryState:
        """Synchronous rebuild (queries the database; not for the event loop)."""
        with self._lock:
            self._stale = False  # cleared first: a change committed during the build re-marks it
            self._state = build_state()
            return self._state

    async def refresh(self) -> None:
        self._stale = False
        self._state = await sync_to_async(_build_in_worker, thread_sensitive=False)()

    # -- tools -----------------------------------------------------------------------------------
    async def call_tool(self, tool: Tool, arguments: dict[str, Any], ctx: Context) -> dict[str, Any]:
        # Resolved once, in the call's snapshot: the spec rides on its tool (snapshot.py).
        spec = tool.target if isinstance(tool.target, ToolSpec) else self.state().tools.get(tool.name)
        if spec is None:
            return _error(f"Tool {tool.name!r} is no longer available")
        try:
            if spec.upstream is not None:
                return await upstream_kind.call_tool(spec.upstream, arguments, ctx, self.upstream_sessions)
            return await kinds.execute(spec, arguments, ctx, self.upstream)
        except ClientRequestError as exc:
            return _error(f"Tool {tool.name!r} needed the client and could not get it: {exc.message}")
        except (ToolError, MCPError, RequestCancelled):
            raise  # a ToolError becomes its isError result in one place: the core's execute_tool
        except Exception:
            logger.exception("Tool %r raised", tool.name)
            return _error(f"Tool {tool.name!r} failed with an internal error")

    # -- resources -------------------------------------------------------------------------------
    async def read_resource(self, uri: str, ctx: Context) -> list[dict[str, Any]]:
        state = self.state()
        spec = state.resources.get(uri)
        if spec is not None:
            if spec.upstream is not None:
                return await upstream_kind.read_resource(spec.upstream, uri, self.upstream_sessions, ctx)
            if spec.kind == "text":
                item = contents_item(uri, spec.mime_type, text=spec.text)
                return [item | {"_meta": dict(spec.meta)} if spec.meta else item]
            if spec.kind == "binary":
                return [contents_item(uri, spec.mime_type, blob=spec.blob)]
            if spec.kind == "code":
                return await serving.read_resource(spec.handler, uri, {}, ctx)
            func = _handler("resource", spec.handler, uri)
            return resource_contents(await handlers.invoke(func, uri, {}, ctx), uri, spec.mime_type)
        # The template mcp_protocol.uri_template says serves it: the one the grant check allowed.
        served = state.snapshot.serving_template(uri)
        template = None if served is None else state.template(served[0].uri_template)
        if served is not None and template is not None:
            variables = served[1]
            if template.upstream is not None:
                return await upstream_kind.read_resource(template.upstream, uri, self.upstream_sessions, ctx)
            if template.kind == "text":
                text = render_text(template.text_template, variables)
                return [contents_item(uri, template.mime_type, text=text)]
            if template.kind == "code":
                return await serving.read_resource(template.handler, uri, variables, ctx)
            func = _handler("resource", template.handler, uri)
            return resource_contents(
                await handlers.invoke(func, uri, variables, ctx), uri, template.mime_type
            )
        raise ResourceNotFound(uri)

    # -- prompts ---------------------------------------------------------------------------------
    async def get_prompt(self, prompt: Prompt, arguments: Mapping[str, str], ctx: Context) -> dict[str, Any]:
        spec = self.state().prompts.get(prompt.name)
        if spec is None:
            raise InvalidParams(f"Unknown prompt: {prompt.name}", {"name": prompt.name})
        if spec.upstream is not None:
            return await upstream_kind.get_prompt(spec.upstream, arguments, ctx, self.upstream_sessions)
        if spec.code:
            return await serving.get_prompt(prompt.name, arguments, ctx)
        if spec.handler:
            func = _handler("prompt", spec.handler, prompt.name)
            return prompt_result(await handlers.invoke(func, dict(arguments), ctx), spec.description)
        # Optional arguments the client left out render as "" rather than null.
        values = {a.name: "" for a in prompt.arguments} | dict(arguments)
        messages = [
            {"role": role, "content": render_json(content, values)} for role, content in spec.messages
        ]
        result: dict[str, Any] = {"messages": messages}
        if spec.description:
            result["description"] = spec.description
        return result

    # -- completion ------------------------------------------------------------------------------
    async def complete(
        self, ref: Mapping[str, Any], argument_name: str, value: str, context_arguments: Mapping[str, str]
    ) -> Completion:
        state = self.state()
        kind = ref.get("type")
        if kind == "ref/prompt":
            prompt = state.prompts.get(str(ref.get("name")))
            if prompt is None:
                raise InvalidParams(f"Unknown prompt: {ref.get('name')}", {"ref": dict(ref)})
            if prompt.upstream is not None:
                return await upstream_kind.complete(prompt.upstream, kind, argument_name, value,
                                                    context_arguments, self.upstream_sessions)
            handler_name, candidates = prompt.completion_handler, prompt.completions.get(argument_name, ())
        elif kind == "ref/resource":
            uri = str(ref.get("uri"))
            template = state.template(uri)
            if template is None:
                if uri in state.resources:
                    return Completion()  # a fixed resource has no variables to complete
                raise InvalidParams(f"Unknown resource template: {uri}", {"ref": dict(ref)})
            if template.upstream is not None:
                return await upstream_kind.complete(template.upstream, kind, argument_name, value,
                                                    context_arguments, self.upstream_sessions)
            handler_name, candidates = (
                template.completion_handler,
                template.completions.get(argument_name, ()),
            )
        else:
            raise InvalidParams(f"Unknown completion reference type: {kind!r}", {"ref": dict(ref)})
        if handler_name:
            func = _handler("completion", handler_name, str(ref.get("name") or ref.get("uri")))
            found = await handlers.invoke(func, argument_name, value, dict(context_arguments))
            if isinstance(found, Completion):
                return found
            values = [str(v) for v in found]
        else:
            prefix = value.casefold()
            values = [c for c in candidates if c.casefold().startswith(prefix)]
        return Completion(
            values=tuple(values[:MAX_COMPLETION_VALUES]),
            total=len(values),
            has_more=len(values) > MAX_COMPLETION_VALUES,
        )


def _build_in_worker() -> RegistryState:
    """Build in a pool thread, then release that thread's connection (per CONN_MAX_AGE): nothing
    else in the thread would ever close it."""
    try:
        return build_state()
    finally:
        close_old_connections()


def _error(message: str) -> dict[str, Any]:
    return {"content": [text_block(message)], "isError": True}


def _handler(family: str, name: str, target: str) -> handlers.Handler:
    try:
        return handlers.get(family, name)
    except handlers.HandlerNotRegistered:
        logger.error("%s handler %r for %s is not registered", family, name, target)
        raise InvalidParams(f"{target} is not available: its {family} handler is not registered") from None
