"""Handlers of the test app: registered only when its module is imported by autodiscovery."""

from __future__ import annotations

from typing import Any

from registry.handlers import resource_handler, tool_handler

TOOL = "handlers_app.ping"
RESOURCE = "handlers_app.note"


@tool_handler(TOOL)
def ping(arguments: dict[str, Any], ctx: Any) -> str:
    return "pong from handlers_app"


@resource_handler(RESOURCE)
def note(uri: str, variables: dict[str, str], ctx: Any) -> str:
    return "a note from handlers_app"
