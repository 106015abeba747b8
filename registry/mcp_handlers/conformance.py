"""Handlers the official conformance suite's fixtures name (``fixtures/conformance.json``).

Outputs are exactly those of /work/shared/spec/conformance-fixtures.md §4 (the upstream reference
servers). Tools that need only text are template rows in the fixture, not handlers here.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from mcp_protocol.context import Context
from mcp_protocol.errors import ToolError

from ..handlers import tool_handler

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
WAV = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="
STEP = 0.05  # the reference servers pause ~50 ms between notifications


@tool_handler("conformance.image")
async def image(arguments: dict[str, Any], ctx: Context) -> list[dict[str, Any]]:
    return [{"type": "image", "data": PNG, "mimeType": "image/png"}]


@tool_handler("conformance.audio")
async def audio(arguments: dict[str, Any], ctx: Context) -> list[dict[str, Any]]:
    return [{"type": "audio", "data": WAV, "mimeType": "audio/wav"}]


@tool_handler("conformance.embedded_resource")
async def embedded_resource(arguments: dict[str, Any], ctx: Context) -> list[dict[str, Any]]:
    return [
        {
            "type": "resource",
            "resource": {
                "uri": "test://embedded-resource",
                "mimeType": "text/plain",
                "text": "This is an embedded resource content.",
            },
        }
    ]


@tool_handler("conformance.multiple_content_types")
async def multiple_content_types(arguments: dict[str, Any], ctx: Context) -> list[dict[str, Any]]:
    return [
        {"type": "text", "text": "Multiple content types test:"},
        {"type": "image", "data": PNG, "mimeType": "image/png"},
        {
            "type": "resource",
            "resource": {
                "uri": "test://mixed-content-resource",
                "mimeType": "application/json",
                "text": json.dumps({"test": "data", "value": 123}, separators=(",", ":")),
            },
        },
    ]


@tool_handler("conformance.logging")
async def with_logging(arguments: dict[str, Any], ctx: Context) -> str:
    await ctx.log("info", "Tool execution started")
    await asyncio.sleep(STEP)
    await ctx.log("info", "Tool processing data")
    await asyncio.sleep(STEP)
    await ctx.log("info", "Tool execution completed")
    return "Tool with logging executed successfully"


@tool_handler("conformance.error")
async def error(arguments: dict[str, Any], ctx: Context) -> str:
    raise ToolError("This tool intentionally returns an error for testing")


@tool_handler("conformance.progress")
async def with_progress(arguments: dict[str, Any], ctx: Context) -> str:
    for step, progress in enumerate((0, 50, 100)):
        if step:
            await asyncio.sleep(STEP)
        await ctx.report_progress(progress, 100, f"Completed step {progress} of 100")
    return str(ctx.progress_token) if ctx.progress_token is not None else "Progress tool completed"


@tool_handler("conformance.sampling")
async def sampling(arguments: dict[str, Any], ctx: Context) -> str:
    result = await ctx.sample(
        {
            "messages": [{"role": "user", "content": {"type": "text", "text": arguments["prompt"]}}],
            "maxTokens": 100,
        }
    )
    content = result.get("content")
    text = content.get("text") if isinstance(content, dict) else json.dumps(content)
    return f"LLM response: {text}"


@tool_handler("conformance.elicitation")
async def elicitation(arguments: dict[str, Any], ctx: Context) -> str:
    result = await ctx.elicit(
        {
            "message": arguments["message"],
            "requestedSchema": {
                "type": "object",
                "properties": {
                    "username": {"type": "string", "description": "User's response"},
                    "email": {"type": "string", "description": "User's email address"},
                },
                "required": ["username", "email"],
            },
        }
    )
    return f"User response: {result.get('action')}, {json.dumps(result.get('content'))}"


@tool_handler("conformance.elicitation_defaults")
async def elicitation_defaults(arguments: dict[str, Any], ctx: Context) -> str:
    result = await ctx.elicit(
        {
            "message": "Please review and update the form fields with defaults",
            "requestedSchema": {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "User name", "default": "John Doe"},
                    "age": {"type": "integer", "description": "User age", "default": 30},
                    "score": {"type": "number", "description": "User score", "default": 95.5},
                    "status": {
                        "type": "string",
                        "description": "User status",
                        "enum": ["active", "inactive", "pending"],
                        "default": "active",
                    },
                    "verified": {"type": "boolean", "description": "Verification status", "default": True},
                },
            },
        }
    )
    return (
        f"Elicitation completed: action={result.get('action')}, content={json.dumps(result.get('content'))}"
    )


@tool_handler("conformance.elicitation_enums")
async def elicitation_enums(arguments: dict[str, Any], ctx: Context) -> str:
    titled = [{"const": f"value{i}", "title": t} for i, t in enumerate(("First", "Second", "Third"), start=1)]
    result = await ctx.elicit(
        {
            "message": "Please select options from the enum fields",
            "requestedSchema": {
                "type": "object",
                "properties": {
                    "untitledSingle": {
                        "type": "string",
                        "description": "Select one option",
                        "enum": ["option1", "option2", "option3"],
                    },
                    "titledSingle": {
                        "type": "string",
                        "description": "Select one titled option",
                        "oneOf": [{"const": o["const"], "title": f"{o['title']} Option"} for o in titled],
                    },
                    "legacyEnum": {
                        "type": "string",
                        "description": "Select one (legacy)",
                        "enum": ["opt1", "opt2", "opt3"],
                        "enumNames": ["Option One", "Option Two", "Option Three"],
                    },
                    "untitledMulti": {
                        "type": "array",
                        "description": "Select several options",
                        "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
                    },
                    "titledMulti": {
                        "type": "array",
                        "description": "Select several titled options",
                        "items": {
                            "anyOf": [{"const": o["const"], "title": f"{o['title']} Choice"} for o in titled]
                        },
                    },
                },
            },
        }
    )
    return (
        f"Elicitation completed: action={result.get('action')}, content={json.dumps(result.get('content'))}"
    )


@tool_handler("conformance.reconnection")
async def reconnection(arguments: dict[str, Any], ctx: Context) -> str:
    # SEP-1699 polling, as the reference servers do it: after the priming event, close the POST's
    # stream mid-call; the client reconnects with Last-Event-ID and gets the result from the log.
    ctx.check_cancelled()
    await asyncio.sleep(0.1)
    await ctx.close_stream()
    for _ in range(15):
        ctx.check_cancelled()
        await asyncio.sleep(0.1)
    return "Reconnection test completed"
