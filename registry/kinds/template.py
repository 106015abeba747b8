"""The ``template`` kind: render text (and optional structured content) from the arguments.

Rendering is ``templating.render_text`` / ``render_json``: placeholder substitution only.
"""

from __future__ import annotations

import json
from typing import Any

from mcp_protocol.context import Context

from ..serving.results import text_block
from ..serving.specs import ToolSpec
from ..validation.templating import render_json, render_text


async def execute(spec: ToolSpec, arguments: dict[str, Any], ctx: Context) -> dict[str, Any]:
    result: dict[str, Any] = {}
    if spec.template_structured is not None:
        result["structuredContent"] = render_json(spec.template_structured, arguments)
    if spec.template_text:
        text = render_text(spec.template_text, arguments)
    else:
        text = json.dumps(result.get("structuredContent"), ensure_ascii=False)
    result["content"] = [text_block(text)]
    return result
