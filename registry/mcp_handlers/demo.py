"""Handlers of the demo registry (``fixtures/demo.json``): one per feature a handler can use."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
from collections.abc import Mapping
from typing import Any

from mcp_protocol.context import Context
from mcp_protocol.errors import ToolError

from ..handlers import completion_handler, prompt_handler, resource_handler, tool_handler

USERS = {"1": "Ada Lovelace", "2": "Alan Turing", "3": "Grace Hopper", "42": "Douglas Adams"}


@tool_handler("demo.echo")
async def echo(arguments: dict[str, Any], ctx: Context) -> str:
    return str(arguments["message"])


@tool_handler("demo.text_stats")
async def text_stats(arguments: dict[str, Any], ctx: Context) -> dict[str, Any]:
    text = str(arguments["text"])
    return {
        "structuredContent": {
            "characters": len(text),
            "words": len(text.split()),
            "lines": text.count("\n") + 1 if text else 0,
        }
    }


@tool_handler("demo.count_down")
async def count_down(arguments: dict[str, Any], ctx: Context) -> str:
    steps = int(arguments.get("steps", 5))
    for done in range(1, steps + 1):
        ctx.check_cancelled()
        await asyncio.sleep(float(arguments.get("delay", 0.2)))
        await ctx.report_progress(done, steps, f"Step {done} of {steps}")
    return f"Counted down {steps} steps"


@tool_handler("demo.log_levels")
async def log_levels(arguments: dict[str, Any], ctx: Context) -> str:
    for level in ("debug", "info", "notice", "warning", "error"):
        await ctx.log(level, {"message": f"A {level} message from the demo", "level": level}, logger="demo")
    return "Sent one log message per level from debug to error (filtered by logging/setLevel)"


@tool_handler("demo.ask_llm")
async def ask_llm(arguments: dict[str, Any], ctx: Context) -> str:
    result = await ctx.sample(
        {
            "messages": [{"role": "user", "content": {"type": "text", "text": arguments["question"]}}],
            "maxTokens": int(arguments.get("max_tokens", 200)),
            "systemPrompt": "Answer briefly.",
        }
    )
    content = result.get("content") or {}
    return f"{result.get('model', 'the model')} says: {content.get('text', json.dumps(content))}"


@tool_handler("demo.ask_user")
async def ask_user(arguments: dict[str, Any], ctx: Context) -> str:
    result = await ctx.elicit(
        {
            "message": arguments.get("message") or "How should I greet you?",
            "requestedSchema": {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "title": "Your name"},
                    "formal": {"type": "boolean", "title": "Formal greeting", "default": False},
                },
                "required": ["name"],
            },
        }
    )
    if result.get("action") != "accept":
        return f"No greeting: the user chose to {result.get('action')}"
    content = result.get("content") or {}
    return f"{'Good day' if content.get('formal') else 'Hi'}, {content.get('name')}!"


@tool_handler("demo.list_roots")
async def list_roots(arguments: dict[str, Any], ctx: Context) -> dict[str, Any]:
    roots = (await ctx.list_roots()).get("roots", [])
    return {
        "content": [{"type": "text", "text": "\n".join(r.get("uri", "") for r in roots) or "(no roots)"}],
        "structuredContent": {"roots": roots},
    }


@tool_handler("demo.fail")
async def fail(arguments: dict[str, Any], ctx: Context) -> str:
    raise ToolError(f"Failed on purpose: {arguments.get('reason') or 'no reason given'}")


@resource_handler("demo.server_time")
async def server_time(uri: str, variables: dict[str, str], ctx: Context) -> str:
    return dt.datetime.now(dt.UTC).isoformat()


@resource_handler("demo.user_profile")
async def user_profile(uri: str, variables: dict[str, str], ctx: Context) -> list[dict[str, Any]]:
    user_id = variables.get("user_id", "")
    if user_id not in USERS:
        from mcp_protocol.errors import ResourceNotFound

        raise ResourceNotFound(uri)
    profile = {"id": user_id, "name": USERS[user_id]}
    return [{"uri": uri, "mimeType": "application/json", "text": json.dumps(profile)}]


@completion_handler("demo.user_ids")
def user_ids(argument_name: str, value: str, context_arguments: Mapping[str, str]) -> list[str]:
    return [uid for uid in sorted(USERS) if uid.startswith(value)]


@prompt_handler("demo.summarize_user")
async def summarize_user(arguments: Mapping[str, str], ctx: Context) -> list[dict[str, Any]]:
    user_id = arguments.get("user_id", "")
    name = USERS.get(user_id, "an unknown user")
    return [
        {
            "role": "user",
            "content": {
                "type": "resource_link",
                "uri": f"demo://users/{user_id}",
                "name": f"user-{user_id}",
                "mimeType": "application/json",
            },
        },
        {"role": "user", "content": {"type": "text", "text": f"Write a two-line biography of {name}."}},
    ]
