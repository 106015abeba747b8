"""The code allow-list: callables a registry row may name, registered with decorators.

A row never holds an import path: it holds a *name*, and the name must be registered here by code
in an installed app's ``mcp_handlers.py`` (imported at startup by ``RegistryConfig.ready`` through
``autodiscover_modules``, like ``admin.py``). Four families:

``@tool_handler("name")``
    ``(arguments: dict, ctx: Context) -> str | list[dict] | dict``. ``str`` is one text block,
    ``list`` is the content blocks, ``dict`` is a whole ``CallToolResult`` (``content``,
    ``structuredContent``, ``isError``; ``content`` may be omitted when ``structuredContent`` is
    given). Raise ``mcp_protocol.errors.ToolError`` for a tool error.
``@resource_handler("name")``
    ``(uri: str, variables: dict[str, str], ctx: Context) -> str | bytes | list[dict]`` — text,
    binary, or the ``contents`` list itself. ``variables`` is empty for a plain resource.
``@prompt_handler("name")``
    ``(arguments: Mapping[str, str], ctx: Context) -> list[dict] | dict`` — the messages, or a whole
    ``GetPromptResult``.
``@completion_handler("name")``
    ``(argument_name: str, value: str, context_arguments: Mapping[str, str]) -> list[str]`` (or a
    ``mcp_protocol.definitions.Completion``).

Each may be ``async def`` or a plain function (run in a worker thread).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from asgiref.sync import sync_to_async

Handler = Callable[..., Any]

FAMILIES = ("tool", "resource", "prompt", "completion")
_registries: dict[str, dict[str, Handler]] = {family: {} for family in FAMILIES}


class HandlerNotRegistered(LookupError):
    pass


def _register(family: str, name: str) -> Callable[[Handler], Handler]:
    if not name or not isinstance(name, str):
        raise ValueError(f"A {family} handler needs a non-empty name")

    def decorator(func: Handler) -> Handler:
        registry = _registries[family]
        existing = registry.get(name)
        # Re-importing a module (autoreload, tests) registers the same function again: fine.
        if existing is not None and _qualname(existing) != _qualname(func):
            raise ValueError(
                f"{family} handler {name!r} is already registered by {_qualname(existing)}; "
                f"{_qualname(func)} cannot take the same name"
            )
        registry[name] = func
        return func

    return decorator


def _qualname(func: Handler) -> str:
    return f"{getattr(func, '__module__', '?')}.{getattr(func, '__qualname__', repr(func))}"


def tool_handler(name: str) -> Callable[[Handler], Handler]:
    return _register("tool", name)


def resource_handler(name: str) -> Callable[[Handler], Handler]:
    return _register("resource", name)


def prompt_handler(name: str) -> Callable[[Handler], Handler]:
    return _register("prompt", name)


def completion_handler(name: str) -> Callable[[Handler], Handler]:
    return _register("completion", name)


def get(family: str, name: str) -> Handler:
    try:
        return _registries[family][name]
    except KeyError:
        raise HandlerNotRegistered(f"No {family} handler named {name!r} is registered in code") from None


def names(family: str) -> list[str]:
    return sorted(_registries[family])


def choices(family: str) -> list[tuple[str, str]]:
    """For a form's select: every registered name of ``family``."""
    return [(name, name) for name in names(family)]


def unregister(family: str, name: str) -> None:
    """For tests that register a handler temporarily."""
    _registries[family].pop(name, None)


# Handler -> is a coroutine function. ``inspect.iscoroutinefunction`` unwraps partials and
# methods on every call (~1.5 us per tools/call in the served profile,
# bench/results/2026-11-24-1850-ours-vs-bare-session12.md); handlers are a fixed set of module
# functions, so the answer is kept (bounded all the same).
_async: dict[Handler, bool] = {}


def _is_async(func: Handler) -> bool:
    try:
        found = _async.get(func)
    except TypeError:  # an unhashable callable: ask every time
        return inspect.iscoroutinefunction(func)
    if found is None:
        found = inspect.iscoroutinefunction(func)
        if len(_async) < 4096:
            _async[func] = found
    return found


async def invoke(func: Handler, *args: Any) -> Any:
    """Call a handler, async or sync; a sync one runs in a worker thread so it may use the ORM."""
    if _is_async(func):
        return await func(*args)
    result = await sync_to_async(func, thread_sensitive=False)(*args)
    if inspect.isawaitable(result):
        result = await result
    return result


def autodiscover() -> None:
    from django.utils.module_loading import autodiscover_modules

    autodiscover_modules("mcp_handlers")
