"""Serving the code definitions: merged into the registry's state, and called from it.

``merge`` adds the code tables to what ``snapshot.build_state`` read from the database, in the
same listing order (tools, templates and prompts by name, resources by URI). A database row that
takes a name (or URI) defined in code is left out and logged: code wins, so a deploy's behaviour
does not depend on what someone typed into the admin; ``registry.E002`` reports the clash at
``migrate``/``check --database`` and the admin refuses new ones. ``call_tool``, ``read_resource``
and ``get_prompt`` run the functions (a plain ``def`` in a worker thread, so it may use the ORM).
"""

from __future__ import annotations

import dataclasses
import functools
import logging
from collections.abc import Callable, Mapping
from typing import Any

from mcp_protocol import definitions as d
from mcp_protocol.context import Context
from mcp_protocol.errors import InvalidParams

from ..handlers import invoke
from ..serving.results import prompt_result, resource_contents
from ..serving.specs import PromptSpec, ResourceSpec, TemplateSpec, ToolSpec
from . import definitions as code

logger = logging.getLogger("registry.code")


def clashes(table: Mapping[str, Any], keys: list[str], what: str) -> set[str]:
    taken = {key for key in keys if key in table}
    for key in sorted(taken):
        logger.warning(
            "%s %r is defined in code (%s) and in the database: serving the code",
            what,
            key,
            code.origin(table[key].func),
        )
    return taken


def add_code(
    tools: list[d.Tool],
    tool_specs: dict[str, ToolSpec],
    resources: list[d.Resource],
    resource_specs: dict[str, ResourceSpec],
    templates: list[TemplateSpec],
    prompts: list[d.Prompt],
    prompt_specs: dict[str, PromptSpec],
) -> None:
    """The definitions written in Python (``registry.code``), merged in listing order."""
    for name, tool in code.TOOLS.items():
        spec = tool_specs[name] = ToolSpec(name=name, kind="code", handler=name)
        tools.append(dataclasses.replace(tool.definition, target=spec))
    for uri, entry in code.RESOURCES.items():
        assert isinstance(entry.definition, d.Resource)
        resources.append(entry.definition)
        resource_specs[uri] = ResourceSpec(
            uri=uri, kind="code", mime_type=entry.definition.mime_type, handler=uri
        )
    for uri_template, entry in code.TEMPLATES.items():
        assert isinstance(entry.definition, d.ResourceTemplate) and entry.template is not None
        templates.append(
            TemplateSpec(
                definition=entry.definition,
                parsed=entry.template,
                kind="code",
                mime_type=entry.definition.mime_type,
                handler=uri_template,
                completions=entry.completions,
            )
        )
    for name, prompt in code.PROMPTS.items():
        prompts.append(prompt.definition)
        prompt_specs[name] = PromptSpec(
            name=name, description=prompt.definition.description, code=True, completions=prompt.completions
        )
    # Sorted again only when code added something: a database-only listing keeps the database's
    # collation order exactly as before.
    if code.TOOLS:
        tools.sort(key=lambda t: t.name)
    if code.RESOURCES:
        resources.sort(key=lambda r: r.uri)
    if code.TEMPLATES:
        templates.sort(key=lambda t: t.definition.name)
    if code.PROMPTS:
        prompts.sort(key=lambda p: p.name)


def code_versions() -> list[str]:
    """What identifies the code definitions in the state's version: each one's origin and wire
    form (a restart with changed code gives a new version, so cursors from before are refused)."""
    return [
        f"{code.origin(e.func)}={e.definition!r}"
        for table in (code.TOOLS, code.RESOURCES, code.TEMPLATES, code.PROMPTS)
        for e in table.values()
    ]


async def _run(func: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
    return await invoke(functools.partial(func, **kwargs))


async def call_tool(name: str, arguments: dict[str, Any], ctx: Context) -> dict[str, Any]:
    entry = code.TOOLS[name]
    value = await _run(entry.func, entry.signature.bind(arguments, ctx))
    return entry.signature.tool_result(value)


async def read_resource(key: str, uri: str, variables: dict[str, str], ctx: Context) -> list[dict[str, Any]]:
    entry = code.TEMPLATES.get(key) or code.RESOURCES[key]
    value = await _run(entry.func, entry.signature.bind(dict(variables), ctx, InvalidParams))
    return resource_contents(value, uri, entry.definition.mime_type)


def _message(item: Any) -> Any:
    if isinstance(item, str):
        return {"role": "user", "content": {"type": "text", "text": item}}
    return item


async def get_prompt(name: str, arguments: Mapping[str, str], ctx: Context) -> dict[str, Any]:
    entry = code.PROMPTS[name]
    value = await _run(entry.func, entry.signature.bind(dict(arguments), ctx, InvalidParams))
    if isinstance(value, str):
        value = [value]
    if isinstance(value, list):
        value = [_message(item) for item in value]
    return prompt_result(value, entry.definition.description)
