"""Tools, resources and prompts written in Python: the decorators and what they register.

Definitions live in a process-wide table filled at import time, when ``RegistryConfig.ready``
imports every installed app's ``mcp_handlers.py`` (like ``admin.py``). The table is static for the
life of the process; ``snapshot.build_state`` serves it beside the database rows, so listing and
dispatch stay on the in-process snapshot (no database on the hot path).

Names follow the database's rules (``validators.validate_name``; URIs RFC 3986, templates RFC
6570). Registering the same name again with another function is an error at import; registering
the same function again (autoreload, tests) is allowed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, TypeVar, overload

from django.core.exceptions import ValidationError

from mcp_protocol import definitions as d
from mcp_protocol.uri_template import ParsedTemplate, TemplateSyntaxError, parse_template

from ..validation.validators import validate_name, validate_uri
from .signature import Signature, read

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class CodeTool:
    func: Callable[..., Any]
    signature: Signature
    definition: d.Tool


@dataclass(frozen=True)
class CodeResource:
    func: Callable[..., Any]
    signature: Signature
    definition: d.Resource | d.ResourceTemplate
    template: ParsedTemplate | None = None
    completions: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class CodePrompt:
    func: Callable[..., Any]
    signature: Signature
    definition: d.Prompt
    completions: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


TASK_SUPPORT = ("forbidden", "optional", "required")  # schema.ts ToolExecution.taskSupport
TOOLS: dict[str, CodeTool] = {}
RESOURCES: dict[str, CodeResource] = {}  # by URI
TEMPLATES: dict[str, CodeResource] = {}  # by URI template
PROMPTS: dict[str, CodePrompt] = {}
TABLES: dict[str, dict[str, Any]] = {
    "TOOLS": TOOLS,
    "RESOURCES": RESOURCES,
    "TEMPLATES": TEMPLATES,
    "PROMPTS": PROMPTS,
}


def origin(func: Callable[..., Any]) -> str:
    return f"{getattr(func, '__module__', '?')}.{getattr(func, '__qualname__', repr(func))}"


def _check_name(name: str) -> None:
    try:
        validate_name(name)
    except ValidationError as exc:
        raise ValueError(exc.messages[0]) from None


def _add(table: dict[str, Any], key: str, entry: Any, what: str) -> None:
    existing = table.get(key)
    if existing is not None and origin(existing.func) != origin(entry.func):
        raise ValueError(
            f"{what} {key!r} is already defined by {origin(existing.func)}; "
            f"{origin(entry.func)} cannot take it"
        )
    table[key] = entry


def _icons(icons: Any) -> tuple[Mapping[str, Any], ...] | None:
    return tuple(icons) if icons else None


def _completions(f: Callable[..., Any], values: Mapping[str, Any] | None, names: Any) -> Any:
    """``completion/complete`` values per argument (or template variable), offered by prefix."""
    unknown = sorted(set(values or {}) - set(names))
    if unknown:
        raise TypeError(f"{origin(f)}: completions for {unknown}, which are not its arguments")
    return MappingProxyType({name: tuple(map(str, options)) for name, options in (values or {}).items()})


@overload
def tool(func: F, /) -> F: ...
@overload
def tool(
    *,
    name: str | None = ...,
    title: str | None = ...,
    description: str | None = ...,
    annotations: Mapping[str, Any] | None = ...,
    icons: Any = ...,
    meta: Mapping[str, Any] | None = ...,
    task_support: str = ...,
) -> Callable[[F], F]: ...
def tool(func: Any = None, /, **options: Any) -> Any:
    """Offer ``func`` as an MCP tool: ``@tool`` or ``@tool(name=..., title=..., annotations=...)``.
    Typed parameters become ``inputSchema``, the return annotation ``outputSchema``, the docstring
    the description; a parameter typed ``Context`` (or named ``ctx``) gets the request context
    (progress, logging, elicitation, sampling, roots, cancellation). ``task_support``
    (``forbidden``, the default; ``optional``; ``required``): whether calls run as tasks."""
    task_support = options.get("task_support", "forbidden")
    if task_support not in TASK_SUPPORT:
        raise ValueError(f"task_support must be one of {', '.join(TASK_SUPPORT)}, not {task_support!r}")

    def register(f: F) -> F:
        name = options.get("name") or f.__name__
        _check_name(name)
        signature = read(f)
        definition = d.Tool(
            name=name,
            input_schema=signature.input_schema,
            description=options.get("description") or signature.description,
            title=options.get("title"),
            output_schema=signature.output_schema,
            annotations=options.get("annotations"),
            icons=_icons(options.get("icons")),
            meta=options.get("meta"),
            execution={"taskSupport": task_support},
        )
        _add(TOOLS, name, CodeTool(f, signature, definition), "Tool")
        return f

    return register(func) if func is not None else register


def resource(
    uri: str,
    *,
    name: str | None = None,
    title: str | None = None,
    description: str | None = None,
    mime_type: str | None = None,
    annotations: Mapping[str, Any] | None = None,
    icons: Any = None,
    meta: Mapping[str, Any] | None = None,
    completions: Mapping[str, Any] | None = None,
) -> Callable[[F], F]:
    """Offer ``func`` as a resource at ``uri``, or as a resource template when ``uri`` has RFC
    6570 variables (``notes://{id}``): the function's parameters are the variables, and
    ``completions`` may list values for them. It returns ``str`` (text), ``bytes`` (binary) or
    the ``contents`` list."""

    def register(f: F) -> F:
        label = name or f.__name__
        _check_name(label)
        signature = read(f)
        common: dict[str, Any] = dict(
            name=label,
            title=title,
            description=description or signature.description,
            mime_type=mime_type,
            annotations=annotations,
            icons=_icons(icons),
            meta=meta,
        )
        if "{" not in uri:
            try:
                validate_uri(uri)
            except ValidationError as exc:
                raise ValueError(exc.messages[0]) from None
            _add(RESOURCES, uri, CodeResource(f, signature, d.Resource(uri=uri, **common)), "Resource")
            return f
        try:
            parsed = parse_template(uri)
        except TemplateSyntaxError as exc:
            raise ValueError(f"{uri!r} is not an RFC 6570 URI template: {exc}") from None
        missing = [p.name for p in signature.params if p.required and p.name not in parsed.variables]
        if missing:
            raise TypeError(f"{origin(f)}: parameters {missing} are not variables of {uri!r}")
        entry = CodeResource(
            f,
            signature,
            d.ResourceTemplate(uri_template=uri, **common),
            parsed,
            _completions(f, completions, parsed.variables),
        )
        _add(TEMPLATES, uri, entry, "Resource template")
        return f

    return register


@overload
def prompt(func: F, /) -> F: ...
@overload
def prompt(
    *,
    name: str | None = ...,
    title: str | None = ...,
    description: str | None = ...,
    icons: Any = ...,
    meta: Mapping[str, Any] | None = ...,
    completions: Mapping[str, Any] | None = ...,
) -> Callable[[F], F]: ...
def prompt(func: Any = None, /, **options: Any) -> Any:
    """Offer ``func`` as a prompt: its parameters are the prompt's arguments (required when they
    have no default; they arrive as strings and are converted to the annotated types), and
    ``completions`` may list values for them. It returns a ``str`` (one user message), a list of
    messages, or a whole ``GetPromptResult``."""

    def register(f: F) -> F:
        name = options.get("name") or f.__name__
        _check_name(name)
        signature = read(f)
        arguments = tuple(
            d.PromptArgument(name=p.name, description=p.description, required=p.required)
            for p in signature.params
        )
        definition = d.Prompt(
            name=name,
            title=options.get("title"),
            description=options.get("description") or signature.description,
            arguments=arguments,
            icons=_icons(options.get("icons")),
            meta=options.get("meta"),
        )
        values = _completions(f, options.get("completions"), [p.name for p in signature.params])
        _add(PROMPTS, name, CodePrompt(f, signature, definition, values), "Prompt")
        return f

    return register(func) if func is not None else register


def code_owner(table: str, key: str) -> str | None:
    """Where the code definition of ``key`` in ``table`` (``"TOOLS"``, ...) is written, if any."""
    entry = TABLES[table].get(key)
    return origin(entry.func) if entry is not None else None


def forget(func: Callable[..., Any]) -> None:
    """Remove every definition of ``func`` (tests that define code temporarily)."""
    for table in (TOOLS, RESOURCES, TEMPLATES, PROMPTS):
        for key in [k for k, entry in table.items() if entry.func is func]:
            del table[key]
