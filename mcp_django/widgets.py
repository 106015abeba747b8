"""Admin widgets the apps share (the registry's definitions, the access app's API keys).

``JSONEditorWidget``: a JSON field edited as text, checked as it is typed (``json-editor.js``), so
schemas, annotations, tags and a key's scopes are edited the same way wherever they are.
"""

from __future__ import annotations

import json
from typing import Any

from django import forms


class JSONEditorWidget(forms.Textarea):
    """A monospace textarea; ``json-editor.js`` pretty-prints valid JSON on blur and flags invalid
    JSON before submit. The server validates regardless."""

    template_name = "django/forms/widgets/textarea.html"

    class Media:
        js = ("mcp_django/json-editor.js",)

    def __init__(self, attrs: dict[str, Any] | None = None) -> None:
        base = {
            "class": "mcp-json-editor vLargeTextField",
            "rows": 10,
            "cols": 80,
            "spellcheck": "false",
            "style": "font-family: monospace",
        }
        super().__init__({**base, **(attrs or {})})

    def format_value(self, value: Any) -> str | None:
        # forms.JSONField hands us a JSON string already; re-indent it for reading.
        if isinstance(value, str) and value:
            try:
                return json.dumps(json.loads(value), indent=2, ensure_ascii=False)
            except ValueError:
                return value
        shown: str | None = super().format_value(value)
        return shown
