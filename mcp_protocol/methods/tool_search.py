"""Tool search (issue 41): an endpoint with many tools lists two meta-tools and its pinned tools,
and the model finds the rest by searching.

When an endpoint's ``ToolSearch`` applies (``endpoints.py``: mode ``on``, or ``auto`` with more
tools in the caller's view than its threshold):

- ``tools/list`` lists ``search_tools``, ``call_tool`` and the tools pinned with
  ``_meta["anthropic/alwaysLoad"]: true`` (``PIN``), in that order;
- ``search_tools(query, limit)`` ranks the tools of the caller's view (the endpoint's selection
  intersected with its grant: ``Call.snapshot``) with the snapshot's index (``search.index_for``,
  built on each worker from its snapshot: no database) and answers their definitions as tools/list
  would shape them for the caller's revision, in ``structuredContent`` (``{"tools": [...]}``,
  declared by the meta-tool's ``outputSchema``) and as JSON text (server/tools.mdx "Structured
  Content": a tool returning structured content SHOULD also return it serialized in a text block);
- ``call_tool(name, arguments)`` is rewritten into a ``tools/call`` of ``name`` before the guard
  and the handler see it (``unwrap``), so it is that call in every respect: the same grant check
  (a name outside the view is the unknown-tool error, -32602, as a tool that does not exist), the
  same input validation, rate limits, audit row, tasks and progress;
- a direct ``tools/call`` of any tool of the view still works (a client that listed before the
  mode changed, or one that remembers a name).

The meta-tools shadow a tool of the same name while the mode applies (the names are the
endpoint's to choose: ``search_tool_name``, ``call_tool_name``).
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from .. import versions
from ..definitions import Snapshot, Tool
from ..endpoints import PIN, ToolSearch
from ..errors import InvalidParams
from ..search import index_for
from .base import Call

MAX_LIMIT, DEFAULT_LIMIT = 50, 10
# Tool.target of the meta-tools: objects of this module, so never a provider's target.
_SEARCH, _CALL = object(), object()


def pinned(tool: Tool) -> bool:
    """Is ``tool`` always listed, search mode or not (its ``_meta`` carries ``PIN: true``)?"""
    return isinstance(tool.meta, dict) and tool.meta.get(PIN) is True


def is_meta(tool: Tool) -> bool:
    return tool.target is _SEARCH or tool.target is _CALL


def active(call: Call) -> ToolSearch | None:
    """The endpoint's tool search when it applies to this caller's view, else None."""
    search = call.server.tool_search
    if search.mode == "off" or not search.applies(len(call.snapshot.tools)):
        return None
    return search


@lru_cache(maxsize=64)
def meta_tools(search: ToolSearch) -> tuple[Tool, Tool]:
    """The two meta-tools under the endpoint's names; descriptions written for the model."""
    find = Tool(
        name=search.search_tool,
        title="Search tools",
        description=(
            "Find the tools of this server that are not listed. Most of its tools are only "
            "reachable through this search: describe the task in a few keywords (what you want to "
            "do, the objects involved) and the best matching tools come back with their full "
            f"definitions (name, description, inputSchema). Then call one with {search.call_tool} "
            "(or directly by its name). Search again with other words if none fits."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "query": {"type": "string", "minLength": 1, "maxLength": 1000,
                          "description": "What you want to do, in a few keywords."},
                "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT, "default": DEFAULT_LIMIT,
                          "description": f"How many tools at most (default {DEFAULT_LIMIT})."},
            },
            "required": ["query"],
            "additionalProperties": False,
        },
        output_schema={
            "type": "object",
            "properties": {
                "tools": {
                    "type": "array",
                    "description": "The matching tools, best first, as tools/list would list them.",
                    "items": {"type": "object", "properties": {"name": {"type": "string"}},
                              "required": ["name"]},
                },
            },
            "required": ["tools"],
        },
        annotations={"readOnlyHint": True, "openWorldHint": False},
        target=_SEARCH,
    )
    run = Tool(
        name=search.call_tool,
        title="Call a tool",
        description=(
            f"Call a tool found with {search.search_tool}: `name` is the tool's name, `arguments` "
            "the object its inputSchema describes. The answer is that tool's own result."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "name": {"type": "string", "minLength": 1, "description": "The tool's name."},
                "arguments": {"type": "object", "description": "The tool's arguments."},
            },
            "required": ["name"],
            "additionalProperties": False,
        },
        target=_CALL,
    )
    return find, run


_listed: dict[tuple[str, ToolSearch], tuple[Tool, ...]] = {}


def listed(snapshot: Snapshot, search: ToolSearch) -> tuple[Tool, ...]:
    """What tools/list shows in search mode: the meta-tools, then the pinned tools of the view
    (scanned once per view version and mode)."""
    key = (snapshot.version, search)
    tools = _listed.get(key)
    if tools is None:
        if len(_listed) >= 256:
            _listed.clear()  # new snapshots retire old views: a bound keeps it simple
        tools = _listed[key] = (*meta_tools(search), *(t for t in snapshot.tools if pinned(t)))
    return tools


def meta_tool(call: Call, name: str) -> Tool | None:
    """The meta-tool ``name`` when search mode applies to this call, else None."""
    search = call.server.tool_search
    if search.mode == "off" or name not in (search.search_tool, search.call_tool):
        return None
    if active(call) is None:
        return None
    find, run = meta_tools(search)
    return find if name == find.name else run


def unwrap(call: Call) -> None:
    """Make a well-formed ``call_tool(name, arguments)`` the ``tools/call`` of ``name`` (every other
    parameter, ``_meta`` and ``task`` included, kept). A malformed one is left to the handler, which
    answers it as any call with invalid arguments."""
    params = call.params
    search = call.server.tool_search
    if params.get("name") != search.call_tool:
        return
    wrapped = params.get("arguments")
    if not isinstance(wrapped, dict) or not set(wrapped) <= {"name", "arguments"}:
        return
    name, arguments = wrapped.get("name"), wrapped.get("arguments", {})
    if not isinstance(name, str) or not name or name == search.call_tool or not isinstance(arguments, dict):
        return
    if active(call) is None:
        return
    call.params = {**params, "name": name, "arguments": arguments}


def run_meta(call: Call, tool: Tool, arguments: dict[str, Any]) -> dict[str, Any]:
    """The raw result of a meta-tool whose arguments passed its inputSchema."""
    if tool.target is _CALL:
        # Reaches here only when unwrap left it: call_tool naming call_tool. No such tool for the
        # model to call: the unknown-tool error, as for any name outside the view.
        raise InvalidParams(f"Unknown tool: {arguments['name']}", {"name": arguments["name"]})
    return search(call, arguments["query"], int(arguments.get("limit", DEFAULT_LIMIT)))


def search(call: Call, query: str, limit: int) -> dict[str, Any]:
    view = call.snapshot
    index = index_for(call.server.provider.snapshot(), call.server.search_ranking)
    hits = index.search(query, limit, allowed=lambda name: view.tool(name) is not None)
    found = [view.tool(hit.tool.name) or hit.tool for hit in hits]
    structured = {"tools": [versions.tool_to_wire(tool, call.version) for tool in found]}
    if call.server.on_search is not None:
        call.server.on_search(call.server.endpoint_key)  # a count per server: never the query
    text = json.dumps(structured, ensure_ascii=False) if found else (
        f"No tool matches {query!r}: search again with other words."
    )
    return {"content": [{"type": "text", "text": text}], "structuredContent": structured}
