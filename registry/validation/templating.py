"""Safe rendering of stored text from arguments: ``{{ name }}`` placeholders, nothing else.

Why not Django's template engine, even locked down: its variable resolution walks attributes,
calls callables and indexes sequences, its tags loop (a stored template could then multiply its
output), and every filter is more surface to review. Tool, prompt and resource-template templates
are written by operators but rendered with *client-supplied* values, so the renderer here does
exactly one thing: replace ``{{ name }}`` with the value of argument ``name`` from a plain dict.
There is no attribute access, no call, no loop, no include, no file or network access, and the
output is at most (template length x largest value), with values inserted once and never
re-rendered.

- ``{{ name }}`` → the value as text: strings as-is, ``null``/missing → ``""``, anything else as
  JSON (``true``, ``3``, ``["a"]``).
- ``{{ name|json }}`` → the value as a JSON literal (a string gets quotes and escapes), for
  building JSON text safely.
- ``{{ name|json_escape }}`` → the value as text, escaped to sit *inside* a JSON string literal
  (``"Data for {{ id|json_escape }}"``), where ``|json``'s quotes would end the string.
- ``{{{{`` is not special; a placeholder that does not parse is left as written when rendered,
  and refused when saved: ``template_problems`` names every placeholder the input schema does not
  define, every ``{{ a.upper }}`` or ``{{ a|upper }}`` and every ``{% tag %}``, which would
  otherwise render as nothing (or as written) without a word.

``render_json`` renders a JSON template (structured content, content blocks): every string is
rendered, and a string that is exactly one placeholder becomes the raw value, keeping its type.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

PLACEHOLDER_RE = re.compile(r"\{\{\s*([A-Za-z0-9_.\-]+)\s*(?:\|\s*(json|json_escape)\s*)?\}\}")


def _as_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def render_text(template: str, values: Mapping[str, Any]) -> str:
    def replace(match: re.Match[str]) -> str:
        value = values.get(match.group(1))
        if match.group(2) == "json":
            return json.dumps(value, ensure_ascii=False)
        if match.group(2) == "json_escape":
            return json.dumps(_as_text(value), ensure_ascii=False)[1:-1]
        return _as_text(value)

    return PLACEHOLDER_RE.sub(replace, template)


def render_json(template: Any, values: Mapping[str, Any]) -> Any:
    if isinstance(template, str):
        whole = PLACEHOLDER_RE.fullmatch(template.strip())
        if whole and not whole.group(2):
            return values.get(whole.group(1))
        return render_text(template, values)
    if isinstance(template, list):
        return [render_json(item, values) for item in template]
    if isinstance(template, dict):
        return {key: render_json(item, values) for key, item in template.items()}
    return template


def placeholders(template: Any) -> set[str]:
    """Every name a text or JSON template refers to (for admin help and validation)."""
    if isinstance(template, str):
        return {m.group(1) for m in PLACEHOLDER_RE.finditer(template)}
    if isinstance(template, list):
        return set().union(*(placeholders(item) for item in template)) if template else set()
    if isinstance(template, dict):
        return set().union(*(placeholders(item) for item in template.values())) if template else set()
    return set()


# Anything that looks like template syntax: a ``{{ ... }}`` (placeholder or not), a ``{% ... %}``
# tag or a ``{# ... #}`` comment of Django/Jinja, which this renderer does not have.
_SYNTAX_RE = re.compile(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}", re.DOTALL)


def input_properties(schema: Any) -> set[str] | None:
    """The argument names an input schema defines (None: not an object schema, nothing to check)."""
    if not isinstance(schema, dict) or not isinstance(schema.get("properties", {}), dict):
        return None
    return set(schema.get("properties") or {})


def _string_problems(text: str, names: set[str]) -> list[str]:
    found = []
    known = ", ".join(sorted(names)) or "none"
    for match in _SYNTAX_RE.finditer(text):
        written = match.group(0)
        placeholder = PLACEHOLDER_RE.fullmatch(written)
        if placeholder is None:
            found.append(
                f"{written} is not supported: a template only substitutes {{{{ name }}}}, "
                "{{ name|json }} or {{ name|json_escape }} (no tags, filters or comments)."
            )
            continue
        name = placeholder.group(1)
        if name in names:
            continue
        head = name.split(".", 1)[0]
        if "." in name and head in names:
            found.append(
                f"{written} is not supported: there is no attribute access, write "
                f"{{{{ {head} }}}} for the whole value."
            )
        else:
            found.append(f"{written}: the input schema does not define {name!r} (its properties: {known}).")
    return found


def template_problems(template: Any, names: set[str] | None) -> list[str]:
    """Why ``template`` (text, or JSON with text in it) would not render what it says from the
    arguments ``names``, one sentence each; ``[]`` when it is fine or nothing can be checked."""
    if names is None:
        return []
    if isinstance(template, str):
        return _string_problems(template, names)
    if isinstance(template, list):
        return [p for item in template for p in template_problems(item, names)]
    if isinstance(template, dict):
        return [p for item in template.values() for p in template_problems(item, names)]
    return []
