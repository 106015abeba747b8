"""Handlers for the conformance suite's 2026-07-28 fixtures (``fixtures/conformance.json``).

The input-required tools are written as any handler is: they ``await ctx.elicit/sample/
list_roots`` with the keys the suite names, and the core turns each question into an
``InputRequiredResult`` for a modern request (and a real server→client request in a legacy
session). ``test_trigger_*_change`` edit the registry so that a ``subscriptions/listen`` stream
sees the change, as an admin edit would.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any

from asgiref.sync import sync_to_async

from mcp_protocol.context import Context

from ..handlers import prompt_handler, tool_handler


def _form(message: str, field: str, kind: str = "string") -> dict[str, Any]:
    return {
        "message": message,
        "requestedSchema": {"type": "object", "properties": {field: {"type": kind}}, "required": [field]},
    }


def _sampling(text: str, max_tokens: int) -> dict[str, Any]:
    message = {"role": "user", "content": {"type": "text", "text": text}}
    return {"messages": [message], "maxTokens": max_tokens}


def _content(answer: dict[str, Any], field: str) -> Any:
    content = answer.get("content")
    return content.get(field) if isinstance(content, dict) else None


def _sampled_text(answer: dict[str, Any]) -> str:
    content = answer.get("content")
    return str(content.get("text")) if isinstance(content, dict) else json.dumps(content)


@tool_handler("conformance.mrtr_elicitation")
async def mrtr_elicitation(arguments: dict[str, Any], ctx: Context) -> str:
    answer = await ctx.elicit(_form("What is your name?", "name"), key="user_name")
    return f"Hello, {_content(answer, 'name')}!"


@tool_handler("conformance.mrtr_sampling")
async def mrtr_sampling(arguments: dict[str, Any], ctx: Context) -> str:
    answer = await ctx.sample(_sampling("What is the capital of France?", 100), key="capital_question")
    return f"LLM response: {_sampled_text(answer)}"


@tool_handler("conformance.mrtr_list_roots")
async def mrtr_list_roots(arguments: dict[str, Any], ctx: Context) -> str:
    answer = await ctx.list_roots(key="client_roots")
    roots = [r for r in answer.get("roots") or () if isinstance(r, dict)]
    return "Roots: " + ", ".join(str(r.get("uri")) for r in roots)


@tool_handler("conformance.mrtr_request_state")
async def mrtr_request_state(arguments: dict[str, Any], ctx: Context) -> str:
    answer = await ctx.elicit(_form("Please confirm", "ok", "boolean"), key="confirm")
    # The core opened and verified the sealed requestState before this line could run.
    return f"state-ok: confirmed={_content(answer, 'ok')}"


@tool_handler("conformance.mrtr_multiple_inputs")
async def mrtr_multiple_inputs(arguments: dict[str, Any], ctx: Context) -> str:
    name, greeting, roots = await asyncio.gather(
        ctx.elicit(_form("What is your name?", "name"), key="user_name"),
        ctx.sample(_sampling("Generate a greeting", 50), key="greeting"),
        ctx.list_roots(key="client_roots"),
    )
    count = len(roots.get("roots") or ())
    return f"{_sampled_text(greeting)} {_content(name, 'name')} ({count} roots)"


@tool_handler("conformance.mrtr_multi_round")
async def mrtr_multi_round(arguments: dict[str, Any], ctx: Context) -> str:
    name = await ctx.elicit(_form("Step 1: What is your name?", "name"), key="step1")
    color = await ctx.elicit(_form("Step 2: What is your favorite color?", "color"), key="step2")
    return f"{_content(name, 'name')} likes {_content(color, 'color')}"


@tool_handler("conformance.mrtr_capabilities")
async def mrtr_capabilities(arguments: dict[str, Any], ctx: Context) -> str:
    # Asks only what the client declared it can answer (mrtr.mdx: MUST NOT send others).
    questions = []
    if "elicitation" in ctx.client_capabilities:
        questions.append(ctx.elicit(_form("What is your name?", "name"), key="user_name"))
    if "sampling" in ctx.client_capabilities:
        questions.append(ctx.sample(_sampling("Say hello", 20), key="hello"))
    answers = await asyncio.gather(*questions)
    return f"Answered {len(answers)} question(s)"


@tool_handler("conformance.missing_capability")
async def missing_capability(arguments: dict[str, Any], ctx: Context) -> str:
    # Needs sampling whether or not it was declared: -32021 when it was not.
    answer = await ctx.sample(_sampling("Hello?", 10))
    return _sampled_text(answer)


@tool_handler("conformance.streaming_elicitation")
async def streaming_elicitation(arguments: dict[str, Any], ctx: Context) -> str:
    await ctx.report_progress(1, 2, "asking")
    answer = await ctx.elicit(_form("What is your name?", "name"), key="user_name")
    return f"Hello, {_content(answer, 'name')}!"


@tool_handler("conformance.logging_tool")
async def logging_tool(arguments: dict[str, Any], ctx: Context) -> str:
    for step in ("started", "working", "done"):
        await ctx.log("info", f"logging tool {step}")
    return "logged (only if the request asked for a log level)"


@prompt_handler("conformance.mrtr_prompt")
async def mrtr_prompt(arguments: Mapping[str, str], ctx: Context) -> list[dict[str, Any]]:
    answer = await ctx.elicit(_form("What context should the prompt use?", "context"), key="user_context")
    text = f"Use this context: {_content(answer, 'context')}"
    return [{"role": "user", "content": {"type": "text", "text": text}}]


def _toggle(model_name: str) -> str:
    """Create the model's ``conformance_toggled`` row, or delete it: either changes the list."""
    from .. import models

    model = getattr(models, model_name)
    name = "conformance_toggled"
    existing = model.objects.filter(name=name).first()
    if existing is not None:
        existing.delete()
        return "removed"
    fields: dict[str, Any] = {"name": name, "description": "Toggled by a conformance trigger"}
    if model_name == "Tool":
        fields.update(kind="template", input_schema={"type": "object"}, template_text="toggled")
    row = model(**fields)
    row.full_clean()
    row.save()
    return "added"


@tool_handler("conformance.trigger_tool_change")
async def trigger_tool_change(arguments: dict[str, Any], ctx: Context) -> str:
    return "tool " + await sync_to_async(_toggle, thread_sensitive=True)("Tool")


@tool_handler("conformance.trigger_prompt_change")
async def trigger_prompt_change(arguments: dict[str, Any], ctx: Context) -> str:
    return "prompt " + await sync_to_async(_toggle, thread_sensitive=True)("Prompt")
