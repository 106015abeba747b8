"""What of a tool the index reads, field by field, and how much each field weighs.

The fields are those issue 41 names: name, title, description, argument names and descriptions,
and tags. Weights (multiplying a word's count in BM25's term frequency) were set from what a
field says about a tool: the name is chosen to say what it does (3), a title or a tag summarises
it (2, 1.5), the description explains it (1), and the arguments say what it works on, not what it
does (0.5 for their names, 0.25 for their descriptions, which are long and repetitive: "the
repository owner" on every GitHub tool).
"""

from __future__ import annotations

from collections.abc import Callable

from ..definitions import Tool
from .text import terms, words

FIELD_WEIGHTS = {"name": 3.0, "title": 2.0, "tags": 1.5, "description": 1.0, "argument": 0.5,
                 "argument_description": 0.25}


def fields(tool: Tool) -> dict[str, list[str]]:
    """The text of each field of ``tool``."""
    names: list[str] = []
    descriptions: list[str] = []
    properties = (tool.input_schema or {}).get("properties")
    if isinstance(properties, dict):
        for name, schema in properties.items():
            names.append(str(name))
            if isinstance(schema, dict) and isinstance(schema.get("description"), str):
                descriptions.append(schema["description"])
    return {"name": [tool.name], "title": [tool.title or ""], "tags": list(tool.tags),
            "description": [tool.description or ""], "argument": names, "argument_description": descriptions}


def counts(tool: Tool, weighted: bool = True,
           analyse: Callable[[str], list[str]] = terms) -> dict[str, float]:
    """The weighted term counts of ``tool`` (each field's weight, or 1 when ``weighted`` is off)."""
    out: dict[str, float] = {}
    for field, texts in fields(tool).items():
        weight = FIELD_WEIGHTS[field] if weighted else 1.0
        for text in texts:
            for term in analyse(text):
                out[term] = out.get(term, 0.0) + weight
    return out


def plain_words(text: str) -> list[str]:
    """Words as a plain BM25 sees them: split and lower-cased, not stemmed, no stop words dropped."""
    return words(text)
