"""Which handler serves which method, in each era, and the provider capabilities it needs.

A method whose gate is closed (the provider lacks a capability) does not exist for the client:
``Server`` answers it with -32601 like an unknown method.
"""

from __future__ import annotations

from .methods import completion, lifecycle, logs, prompts, resources, skills, subscriptions, tasks, tools
from .methods.base import Handler
from .provider import ProviderCapabilities

Gate = tuple[str, ...]  # the ProviderCapabilities flags a method needs, all of them
_OPEN: Gate = ()


def gate_open(caps: ProviderCapabilities, gate: Gate) -> bool:
    return all(getattr(caps, flag) for flag in gate)


_SHARED: dict[str, tuple[Handler, Gate]] = {
    "tools/list": (tools.list_tools, ("tools",)),
    "tools/call": (tools.call_tool, ("tools",)),
    "resources/list": (resources.list_resources, ("resources",)),
    "resources/read": (resources.read_resource, ("resources",)),
    "resources/templates/list": (resources.list_resource_templates, ("resources",)),
    "prompts/list": (prompts.list_prompts, ("prompts",)),
    "prompts/get": (prompts.get_prompt, ("prompts",)),
    "completion/complete": (completion.complete, ("completions",)),
    # SEP-2640: skills are resources, so the extension needs the resources capability too.
    "skills/list": (skills.list_skills, ("resources", "skills")),
    "skills/get": (skills.get_skill, ("resources", "skills")),
    "resources/directory/read": (skills.read_directory, ("resources", "skills")),
}
# server/resources.mdx: `subscribe` is a feature *of* the resources capability, so a server
# without resources has no subscriptions even if the provider left the sub-flag on.
_SUBSCRIBE: Gate = ("resources", "resources_subscribe")
LEGACY_METHODS: dict[str, tuple[Handler, Gate]] = {
    **_SHARED,
    "initialize": (lifecycle.initialize, _OPEN),
    "ping": (lifecycle.ping, _OPEN),
    "resources/subscribe": (resources.subscribe, _SUBSCRIBE),
    "resources/unsubscribe": (resources.unsubscribe, _SUBSCRIBE),
    "logging/setLevel": (logs.set_level, ("logging",)),
    # 2025-11-25 basic/utilities/tasks.mdx (answered -32601 when the server makes no tasks).
    "tasks/get": (tasks.get_task, ("tools",)),
    "tasks/result": (tasks.task_result, ("tools",)),
    "tasks/list": (tasks.list_tasks, ("tools",)),
    "tasks/cancel": (tasks.cancel_task, ("tools",)),
}
# 2026-07-28 changelog: no initialize, ping, logging/setLevel or resources/(un)subscribe.
MODERN_METHODS: dict[str, tuple[Handler, Gate]] = {
    **_SHARED,
    "server/discover": (lifecycle.discover, _OPEN),
    "subscriptions/listen": (subscriptions.listen, _OPEN),
    # The extension io.modelcontextprotocol/tasks (SEP-2663): no tasks/result nor tasks/list.
    "tasks/get": (tasks.get_task, ("tools",)),
    "tasks/update": (tasks.update_task, ("tools",)),
    "tasks/cancel": (tasks.cancel_task, ("tools",)),
}
