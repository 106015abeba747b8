"""``prompts/list`` and ``prompts/get`` (server/prompts.mdx).

Unknown prompt, a non-string argument value, or a missing required argument → -32602 (the spec's
"Invalid prompt name" / "Missing required arguments"). Message content is fitted to the revision.
"""

from __future__ import annotations

from typing import Any

from .. import versions
from ..definitions import Prompt
from ..errors import InvalidParams
from .base import Call, optional_object, require_str
from .listing import list_page


def _prompt_key(prompt: Prompt) -> str:
    return prompt.name


async def list_prompts(call: Call) -> dict[str, Any]:
    return list_page(call, "prompts", "prompts", call.snapshot.prompts, _prompt_key, versions.prompt_to_wire)


async def get_prompt(call: Call) -> dict[str, Any]:
    name = require_str(call.params, "name")
    prompt = call.snapshot.prompt(name)
    if prompt is None:
        raise InvalidParams(f"Unknown prompt: {name}", {"name": name})
    arguments = optional_object(call.params, "arguments")
    bad = sorted(k for k, v in arguments.items() if not isinstance(v, str))
    if bad:
        raise InvalidParams(f"Prompt arguments must be strings: {', '.join(bad)}")
    missing = [a.name for a in prompt.arguments if a.required and a.name not in arguments]
    if missing:
        raise InvalidParams(f"Missing required arguments: {', '.join(missing)}", {"missing": missing})
    result = dict(await call.server.provider.get_prompt(prompt, arguments, call.ctx))
    messages = []
    for message in result.get("messages") or ():
        shaped = dict(message)
        if isinstance(shaped.get("content"), dict):
            shaped["content"] = versions.content_to_wire(shaped["content"], call.version)
        messages.append(shaped)
    result["messages"] = messages
    return result
