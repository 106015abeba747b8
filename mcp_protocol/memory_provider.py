"""``MemoryProvider``: a ``Provider`` kept in process memory, for unit tests, stdio and first runs.

``MemoryProvider()`` (no arguments, as settings build it) serves a small demo set: tools ``echo``,
``add`` (structured output), ``countdown`` (progress + logs), ``slow`` (waits; cancellable),
``fail`` (a tool error), ``ask_llm`` (sampling), ``ask_user`` (elicitation) and ``list_roots``
(roots); a text resource
``demo://readme``; a template ``demo://greeting/{name}`` with completion; a prompt ``greet`` with
arguments and completion values. Tests pass their own definitions and async callables instead,
and may ``add``/``remove`` entries: every change makes a new ``Snapshot`` with a new version.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any

from .context import Context
from .definitions import Completion, Prompt, PromptArgument, Resource, ResourceTemplate, Snapshot, Tool
from .endpoints import EndpointSpec
from .errors import InvalidParams, ResourceNotFound, ToolError
from .provider import Provider, ProviderCapabilities
from .skills import Skill, with_nested

ToolFn = Callable[[dict[str, Any], Context], Awaitable[dict[str, Any]]]
ReadFn = Callable[[str, dict[str, str], Context], Awaitable[list[dict[str, Any]]]]
PromptFn = Callable[[Mapping[str, str], Context], Awaitable[dict[str, Any]]]
# (("prompt", name) | ("resource", uri_template), argument) → candidate values
Completions = Mapping[tuple[tuple[str, str], str], Sequence[str]]

_versions = itertools.count(1)


class MemoryProvider(Provider):
    def __init__(
        self,
        *,
        tools: Iterable[tuple[Tool, ToolFn]] | None = None,
        resources: Iterable[tuple[Resource, ReadFn]] | None = None,
        templates: Iterable[tuple[ResourceTemplate, ReadFn]] | None = None,
        prompts: Iterable[tuple[Prompt, PromptFn]] | None = None,
        completions: Completions | None = None,
        capabilities: ProviderCapabilities | None = None,
        skills: Iterable[Skill] | None = None,
        endpoints: Iterable[EndpointSpec] = (),
    ) -> None:
        if tools is None and resources is None and templates is None and prompts is None:
            tools, resources, templates, prompts, completions = _demo()
        self._skills: dict[str, Skill] = {s.path: s for s in skills or ()}
        self.capabilities = capabilities or ProviderCapabilities(skills=skills is not None)
        self._tools: dict[str, tuple[Tool, ToolFn]] = {t.name: (t, fn) for t, fn in tools or ()}
        self._resources: dict[str, tuple[Resource, ReadFn]] = {r.uri: (r, fn) for r, fn in resources or ()}
        self._templates: dict[str, tuple[ResourceTemplate, ReadFn]] = {
            t.uri_template: (t, fn) for t, fn in templates or ()
        }
        self._prompts: dict[str, tuple[Prompt, PromptFn]] = {p.name: (p, fn) for p, fn in prompts or ()}
        self._completions: dict[tuple[tuple[str, str], str], Sequence[str]] = dict(completions or {})
        self._endpoints = tuple(endpoints)  # virtual servers (endpoints.py): enabled ones only
        self.refresh_count = 0
        self._rebuild()

    # -- definitions ----------------------------------------------------------------------------
    def _rebuild(self) -> None:
        self._snapshot = Snapshot(
            version=f"mem-{next(_versions)}",
            tools=tuple(t for t, _ in self._tools.values()),
            resources=tuple(r for r, _ in self._resources.values()),
            resource_templates=tuple(t for t, _ in self._templates.values()),
            prompts=tuple(p for p, _ in self._prompts.values()),
            skills=with_nested(self._skills.values()),
            endpoints=self._endpoints,
        )

    def snapshot(self) -> Snapshot:
        return self._snapshot

    async def refresh(self) -> None:
        self.refresh_count += 1

    def add_tool(self, tool: Tool, fn: ToolFn, *, index: int | None = None) -> None:
        items = [(k, v) for k, v in self._tools.items() if k != tool.name]
        items.insert(len(items) if index is None else index, (tool.name, (tool, fn)))
        self._tools = dict(items)
        self._rebuild()

    def remove_tool(self, name: str) -> None:
        self._tools.pop(name, None)
        self._rebuild()

    def add_resource(self, resource: Resource, fn: ReadFn) -> None:
        self._resources[resource.uri] = (resource, fn)
        self._rebuild()

    def set_endpoints(self, endpoints: Iterable[EndpointSpec]) -> None:
        """Serve these virtual servers from the next snapshot on (a disabled one is left out)."""
        self._endpoints = tuple(endpoints)
        self._rebuild()

    def put_skill(self, skill: Skill) -> None:
        self._skills[skill.path] = skill
        self._rebuild()

    # -- operations -----------------------------------------------------------------------------
    async def call_tool(self, tool: Tool, arguments: dict[str, Any], ctx: Context) -> dict[str, Any]:
        entry = self._tools.get(tool.name)
        if entry is None:
            raise ToolError(f"Tool {tool.name} is no longer available")
        return await entry[1](arguments, ctx)

    async def read_resource(self, uri: str, ctx: Context) -> list[dict[str, Any]]:
        listed = self._resources.get(uri)
        if listed is not None:
            return await listed[1](uri, {}, ctx)
        served = self._snapshot.serving_template(uri)  # uri_template: the one matcher and its rule
        if served is None:
            raise ResourceNotFound(uri)
        template, variables = served
        return await self._templates[template.uri_template][1](uri, variables, ctx)

    async def get_prompt(self, prompt: Prompt, arguments: Mapping[str, str], ctx: Context) -> dict[str, Any]:
        return await self._prompts[prompt.name][1](arguments, ctx)

    async def complete(
        self, ref: Mapping[str, Any], argument_name: str, value: str, context_arguments: Mapping[str, str]
    ) -> Completion:
        if ref.get("type") == "ref/prompt":
            name = str(ref.get("name"))
            prompt = self._prompts.get(name)
            if prompt is None:
                raise InvalidParams(f"Unknown prompt: {name}", {"ref": dict(ref)})
            if argument_name not in {a.name for a in prompt[0].arguments}:
                raise InvalidParams(f"Prompt {name} has no argument {argument_name!r}")
            key = (("prompt", name), argument_name)
        else:
            uri = str(ref.get("uri"))
            if uri not in self._templates and uri not in self._resources:
                raise InvalidParams(f"Unknown resource template: {uri}", {"ref": dict(ref)})
            key = (("resource", uri), argument_name)
        matches = [v for v in self._completions.get(key, ()) if v.startswith(value)]
        return Completion(values=tuple(matches), total=len(matches), has_more=False)


# -- the demo set --------------------------------------------------------------------------------
def _text(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}]}


async def _echo(args: dict[str, Any], ctx: Context) -> dict[str, Any]:
    return _text(str(args["message"]))


async def _add(args: dict[str, Any], ctx: Context) -> dict[str, Any]:
    total = args["a"] + args["b"]
    return {"content": [{"type": "text", "text": str(total)}], "structuredContent": {"sum": total}}


async def _countdown(args: dict[str, Any], ctx: Context) -> dict[str, Any]:
    steps = int(args.get("steps", 3))
    await ctx.log("info", {"event": "countdown started", "steps": steps}, logger="demo")
    for step in range(1, steps + 1):
        ctx.check_cancelled()
        await ctx.log("debug", f"step {step} of {steps}", logger="demo")
        await ctx.report_progress(step, steps, f"step {step} of {steps}")
        await asyncio.sleep(0)
    await ctx.log("info", "countdown finished", logger="demo")
    return _text(f"counted {steps} steps")


async def _slow(args: dict[str, Any], ctx: Context) -> dict[str, Any]:
    await asyncio.sleep(float(args.get("seconds", 30)))
    return _text("done")


async def _fail(args: dict[str, Any], ctx: Context) -> dict[str, Any]:
    raise ToolError(str(args.get("reason") or "This tool always fails"))


async def _ask_llm(args: dict[str, Any], ctx: Context) -> dict[str, Any]:
    reply = await ctx.sample(
        {
            "messages": [{"role": "user", "content": {"type": "text", "text": args["prompt"]}}],
            "maxTokens": 100,
        }
    )
    content = reply.get("content") or {}
    text = content.get("text", "") if isinstance(content, dict) else ""
    return _text(f"LLM response: {text}")


async def _ask_user(args: dict[str, Any], ctx: Context) -> dict[str, Any]:
    reply = await ctx.elicit(
        {
            "message": args["message"],
            "requestedSchema": {
                "type": "object",
                "properties": {"username": {"type": "string", "description": "Your name"}},
                "required": ["username"],
            },
        }
    )
    return _text(f"User response: {reply.get('action')}, {reply.get('content')}")


async def _list_roots(args: dict[str, Any], ctx: Context) -> dict[str, Any]:
    reply = await ctx.list_roots()
    roots = [r for r in reply.get("roots") or () if isinstance(r, dict)]
    lines = [f"{r.get('name') or '-'}: {r.get('uri')}" for r in roots]
    return _text("\n".join(lines) if lines else "no roots")


async def _readme(uri: str, variables: dict[str, str], ctx: Context) -> list[dict[str, Any]]:
    return [{"uri": uri, "mimeType": "text/plain", "text": "mcpsite demo server: try the echo tool."}]


async def _greeting(uri: str, variables: dict[str, str], ctx: Context) -> list[dict[str, Any]]:
    return [{"uri": uri, "mimeType": "text/plain", "text": f"Hello, {variables['name']}!"}]


async def _greet(arguments: Mapping[str, str], ctx: Context) -> dict[str, Any]:
    style = arguments.get("style", "friendly")
    text = f"Write a {style} greeting for {arguments['name']}."
    return {
        "description": "A greeting",
        "messages": [{"role": "user", "content": {"type": "text", "text": text}}],
    }


def _object(properties: dict[str, Any], required: Sequence[str] = ()) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = list(required)
    return schema


def _demo() -> tuple[
    list[tuple[Tool, ToolFn]],
    list[tuple[Resource, ReadFn]],
    list[tuple[ResourceTemplate, ReadFn]],
    list[tuple[Prompt, PromptFn]],
    Completions,
]:
    string, number = {"type": "string"}, {"type": "number"}
    tools: list[tuple[Tool, ToolFn]] = [
        (Tool("echo", _object({"message": string}, ["message"]), "Echo a message back", "Echo"), _echo),
        (
            Tool(
                "add",
                _object({"a": number, "b": number}, ["a", "b"]),
                "Add two numbers",
                "Add",
                output_schema=_object({"sum": number}, ["sum"]),
                annotations={"readOnlyHint": True},
            ),
            _add,
        ),
        (
            Tool(
                "countdown",
                _object({"steps": {"type": "integer", "minimum": 1, "maximum": 100}}),
                "Count down, reporting progress and logging each step",
            ),
            _countdown,
        ),
        (Tool("slow", _object({"seconds": number}), "Wait for a while (cancellable)"), _slow),
        (Tool("fail", _object({"reason": string}), "Always fails with a tool error"), _fail),
        (
            Tool("ask_llm", _object({"prompt": string}, ["prompt"]), "Ask the client's LLM (sampling)"),
            _ask_llm,
        ),
        (
            Tool("ask_user", _object({"message": string}, ["message"]), "Ask the user (elicitation)"),
            _ask_user,
        ),
        (Tool("list_roots", _object({}), "List the client's roots (roots/list)"), _list_roots),
    ]
    resources: list[tuple[Resource, ReadFn]] = [
        (Resource("demo://readme", "readme", "Read me", "About this server", "text/plain"), _readme),
    ]
    templates: list[tuple[ResourceTemplate, ReadFn]] = [
        (
            ResourceTemplate(
                "demo://greeting/{name}", "greeting", "Greeting", "A greeting for a name", "text/plain"
            ),
            _greeting,
        ),
    ]
    prompts: list[tuple[Prompt, PromptFn]] = [
        (
            Prompt(
                "greet",
                "Greet",
                "Write a greeting",
                (
                    PromptArgument("name", "Name", "Who to greet", True),
                    PromptArgument("style", None, "Tone", False),
                ),
            ),
            _greet,
        )
    ]
    names = ("Alice", "Alan", "Bob", "Carol")
    completions: Completions = {
        (("prompt", "greet"), "name"): names,
        (("prompt", "greet"), "style"): ("friendly", "formal", "funny"),
        (("resource", "demo://greeting/{name}"), "name"): names,
    }
    return tools, resources, templates, prompts, completions
